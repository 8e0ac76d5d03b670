package mcpfake

import (
	"fmt"
	"strings"
)

// outputs are canned answers, shaped and sized like the real tools' output,
// for the tools an incident conversation calls most. The text depends only
// on the arguments, so runs are repeatable.
var outputs = map[string]func(args map[string]any) string{
	"pods_list_in_namespace": func(args map[string]any) string {
		ns := argString(args, "namespace", "default")
		return fmt.Sprintf(`NAMESPACE   APIVERSION   KIND   NAME                          READY   STATUS             RESTARTS       AGE   IP             NODE
%[1]s   v1           Pod    checkout-7d4b9c6f5-2xkqp      1/1     Running            0              3d    10.42.3.17     ip-10-0-3-17
%[1]s   v1           Pod    checkout-7d4b9c6f5-8mzfw      1/1     Running            0              3d    10.42.1.22     ip-10-0-1-9
%[1]s   v1           Pod    checkout-7d4b9c6f5-qs7tn      0/1     CrashLoopBackOff   14 (2m ago)    41m   10.42.2.31     ip-10-0-2-44
%[1]s   v1           Pod    payments-api-5f6c2d8b7-hw9lx  2/2     Running            1 (5h ago)     6d    10.42.3.40     ip-10-0-3-17
%[1]s   v1           Pod    payments-api-5f6c2d8b7-r4v2c  2/2     Running            0              6d    10.42.1.57     ip-10-0-1-9
%[1]s   v1           Pod    payments-worker-6b9f4-xk2mt   1/1     Running            0              2d    10.42.2.12     ip-10-0-2-44
%[1]s   v1           Pod    redis-master-0                1/1     Running            0              21d   10.42.1.5      ip-10-0-1-9
%[1]s   v1           Pod    redis-replicas-0              1/1     Running            0              21d   10.42.3.8      ip-10-0-3-17
`, ns)
	},
	"pods_log": func(args map[string]any) string {
		pod := argString(args, "name", "checkout-7d4b9c6f5-qs7tn")
		var b strings.Builder
		for i, line := range []string{
			`level=info msg="starting checkout" version=1.41.3 commit=9c1e2af`,
			`level=info msg="connecting to redis" addr=redis-master.prod.svc:6379`,
			`level=info msg="connecting to payments" url=http://payments-api.prod.svc:8080`,
			`level=warn msg="payments health check slow" latency=1.84s threshold=1s`,
			`level=error msg="upstream request failed" upstream=payments-api status=502 path=/v1/charges attempt=1`,
			`level=error msg="upstream request failed" upstream=payments-api status=502 path=/v1/charges attempt=2`,
			`level=error msg="upstream request failed" upstream=payments-api status=502 path=/v1/charges attempt=3`,
			`level=error msg="readiness probe failing" reason="payments unavailable" consecutive=5`,
			`level=info msg="received SIGTERM, draining connections" open=12`,
			`level=fatal msg="shutdown timed out after 30s; exiting" code=1`,
		} {
			fmt.Fprintf(&b, "2026-03-14T09:%02d:%02d.%03dZ %s pod=%s\n", 41+i/4, (i*7)%60, (i*137)%1000, line, pod)
		}
		return b.String()
	},
	"events_list": func(args map[string]any) string {
		ns := argString(args, "namespace", "prod")
		return fmt.Sprintf(`# The following events (YAML format) were found:
- InvolvedObject: {Kind: Pod, Name: checkout-7d4b9c6f5-qs7tn, apiVersion: v1}
  Namespace: %[1]s
  Reason: BackOff
  Message: Back-off restarting failed container checkout in pod checkout-7d4b9c6f5-qs7tn
  Type: Warning
  Count: 172
  Timestamp: 2026-03-14 09:44:12 +0000 UTC
- InvolvedObject: {Kind: Pod, Name: checkout-7d4b9c6f5-qs7tn, apiVersion: v1}
  Namespace: %[1]s
  Reason: Unhealthy
  Message: 'Readiness probe failed: HTTP probe failed with statuscode: 503'
  Type: Warning
  Count: 64
  Timestamp: 2026-03-14 09:43:58 +0000 UTC
- InvolvedObject: {Kind: Deployment, Name: payments-api, apiVersion: apps/v1}
  Namespace: %[1]s
  Reason: ScalingReplicaSet
  Message: Scaled up replica set payments-api-5f6c2d8b7 to 2
  Type: Normal
  Count: 1
  Timestamp: 2026-03-14 03:12:40 +0000 UTC
`, ns)
	},
	"pods_top": func(map[string]any) string {
		return `NAMESPACE   POD                           NAME             CPU(cores)   MEMORY(bytes)
prod        checkout-7d4b9c6f5-2xkqp      checkout         212m         388Mi
prod        checkout-7d4b9c6f5-8mzfw      checkout         198m         402Mi
prod        payments-api-5f6c2d8b7-hw9lx  payments-api     941m         1712Mi
prod        payments-api-5f6c2d8b7-r4v2c  payments-api     967m         1698Mi
prod        redis-master-0                redis            35m          96Mi
`
	},
	"helm_history": func(args map[string]any) string {
		return fmt.Sprintf(`REVISION  UPDATED                   STATUS      CHART             APP VERSION  DESCRIPTION
39        2026-03-02 10:14:51 UTC   superseded  payments-2.18.0   1.40.1       Upgrade complete
40        2026-03-09 16:02:07 UTC   superseded  payments-2.18.1   1.41.0       Upgrade complete
41        2026-03-14 08:57:33 UTC   deployed    payments-2.19.0   1.42.0       Upgrade complete (release %s)
`, argString(args, "name", "payments"))
	},
	"rollouts_status": func(args map[string]any) string {
		return fmt.Sprintf("Rollout %s: Paused - CanaryPauseStep (step 3/8, canary weight 20%%, 1 of 5 replicas updated, analysis Running)\n",
			argString(args, "name", "payments"))
	},
}
