package kubetest_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// TestControlPlaneRunsDeployments drives the control plane as an SRE
// would with kubectl: the apiserver reports the pinned version, a
// Deployment is created and scaled, and the controllers act on it (the
// ReplicaSet follows the scale and its pods are created, Pending for want
// of a kubelet).
func TestControlPlaneRunsDeployments(t *testing.T) {
	c := kubetest.Shared(t)
	var v struct {
		ServerVersion struct{ GitVersion string } `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(c.Kubectl(t, "version", "-o", "json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.ServerVersion.GitVersion != kubetest.Version {
		t.Errorf("server version = %q, want %s", v.ServerVersion.GitVersion, kubetest.Version)
	}

	ns := c.Namespace(t, "smoke")
	c.Kubectl(t, "-n", ns, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
	c.Kubectl(t, "-n", ns, "scale", "deployment", "web", "--replicas=3")
	if got := c.Kubectl(t, "-n", ns, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); got != "3" {
		t.Errorf("spec.replicas read back = %q, want 3", got)
	}
	waitFor(t, "the ReplicaSet at 3 replicas with 3 pods", func() (bool, string) {
		rs := c.Kubectl(t, "-n", ns, "get", "replicasets", "-l", "app=web", "-o", "jsonpath={.items[*].spec.replicas}")
		pods := strings.Fields(c.Kubectl(t, "-n", ns, "get", "pods", "-l", "app=web", "-o", "name"))
		return rs == "3" && len(pods) == 3, "replicasets: " + rs + "; pods: " + strconv.Itoa(len(pods))
	})
	for name, pid := range c.PIDs() {
		t.Logf("%s: pid %d, %s", name, pid, rss(pid))
	}
}

// TestNamespaceNamesAreNotReused checks that a shared cluster hands a name
// out once: a second test asking for "payments" gets its own namespace.
func TestNamespaceNamesAreNotReused(t *testing.T) {
	c := kubetest.Shared(t)
	a := c.Namespace(t, "twice")
	b := c.Namespace(t, "twice")
	if a != "twice" || b != "twice-2" {
		t.Errorf("namespaces = %q, %q; want twice, twice-2", a, b)
	}
	if _, err := c.TryKubectl("", "get", "namespace", b); err != nil {
		t.Errorf("namespace %s was not created: %v", b, err)
	}
}

// TestMCPServersReadTheCluster connects opsgate's own MCP client
// (core/tools) to both Kubernetes MCP servers, with the environment the
// cluster gives them, and calls a read tool of each against it.
func TestMCPServersReadTheCluster(t *testing.T) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "mcp-read")
	c.Kubectl(t, "-n", ns, "create", "deployment", "payments-api", "--image=registry.example/payments:1.4", "--replicas=2")
	waitFor(t, "2 pods of payments-api", func() (bool, string) {
		pods := strings.Fields(c.Kubectl(t, "-n", ns, "get", "pods", "-o", "name"))
		return len(pods) == 2, strings.Join(pods, " ")
	})

	cases := []struct {
		server     string
		serverInfo string
		tool       string
		args       map[string]any
		want       string
	}{
		{kubetest.KubernetesMCPServer, "kubernetes-mcp-server", "pods_list_in_namespace", map[string]any{"namespace": ns}, "payments-api-"},
		{kubetest.MCPServerKubernetes, "kubernetes", "kubectl_get", map[string]any{"resourceType": "deployments", "namespace": ns}, `"payments-api"`},
	}
	for _, tc := range cases {
		t.Run(tc.server, func(t *testing.T) {
			argv := kubetest.MCPServer(t, tc.server)
			if got := serverInfoName(t, argv, c); got != tc.serverInfo {
				t.Errorf("serverInfo name = %q, want %q", got, tc.serverInfo)
			}

			host, err := tools.New([]tools.ServerConfig{{Name: "k8s", Command: argv[0], Args: argv[1:], Env: c.Env()}})
			if err != nil {
				t.Fatal(err)
			}
			defer host.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			list, err := host.Tools(ctx, "k8s")
			if err != nil {
				t.Fatal(err)
			}
			tool, ok := find(list, tc.tool)
			if !ok {
				t.Fatalf("%s lists no %s; tools: %v", tc.server, tc.tool, names(list))
			}
			t.Logf("%s: %d tools", tc.server, len(list))
			if tool.Risk != core.RiskRead {
				t.Errorf("%s risk = %s, want read", tc.tool, tool.Risk)
			}
			args, _ := json.Marshal(tc.args)
			if err := host.Validate(tool, args); err != nil {
				t.Fatalf("validate %s: %v", args, err)
			}
			res, err := host.Call(ctx, tool, args, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("%s(%s) = %+v, want a result naming %s", tc.tool, args, res, tc.want)
			}
		})
	}
}

// TestOtherMCPServersStart checks the remaining locators: argocd-mcp lists
// its tools without an Argo CD and annotates none of them (so every one is
// a write to opsgate until configured otherwise), and the filesystem
// server serves a directory.
func TestOtherMCPServersStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	argo := kubetest.MCPServer(t, kubetest.ArgoCDMCP)
	fs := append(kubetest.MCPServer(t, kubetest.ServerFilesystem), t.TempDir())
	host, err := tools.New([]tools.ServerConfig{
		{Name: "argocd", Command: argo[0], Args: argo[1:], Env: map[string]string{
			"ARGOCD_BASE_URL": "https://127.0.0.1:1", "ARGOCD_API_TOKEN": "unused"}},
		{Name: "fs", Command: fs[0], Args: fs[1:]},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()

	list, err := host.Tools(ctx, "argocd")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"get_application", "list_applications", "sync_application"} {
		if _, ok := find(list, want); !ok {
			t.Errorf("argocd-mcp lists no %s; tools: %v", want, names(list))
		}
	}
	for _, tool := range list {
		if tool.Risk != core.RiskWrite {
			t.Errorf("argocd-mcp %s risk = %s, want write (it annotates nothing)", tool.Remote, tool.Risk)
		}
	}
	t.Logf("argocd-mcp: %d tools", len(list))

	list, err = host.Tools(ctx, "fs")
	if err != nil {
		t.Fatal(err)
	}
	if tool, ok := find(list, "write_file"); !ok || tool.Risk == core.RiskRead {
		t.Errorf("filesystem server write_file = %+v (found %v), want a tool needing approval", tool, ok)
	}
}

// serverInfoName initializes a client of the server and returns the name
// it reports, by which opsgate's built-in previews recognise it.
func serverInfoName(t *testing.T, argv []string, c *kubetest.Cluster) string {
	t.Helper()
	var env []string
	for k, v := range c.Env() {
		env = append(env, k+"="+v)
	}
	cl, err := client.NewStdioMCPClient(argv[0], env, argv[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "kubetest", Version: "0"}
	res, err := cl.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize %v: %v", argv, err)
	}
	t.Logf("%s reports serverInfo %q %s", argv[len(argv)-1], res.ServerInfo.Name, res.ServerInfo.Version)
	return res.ServerInfo.Name
}

func find(list []core.Tool, remote string) (core.Tool, bool) {
	for _, t := range list {
		if t.Remote == remote {
			return t, true
		}
	}
	return core.Tool{}, false
}

func names(list []core.Tool) []string {
	var s []string
	for _, t := range list {
		s = append(s, t.Remote)
	}
	return s
}

// waitFor polls cond until it holds, failing t after a minute with what
// cond last saw.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute; last saw %s", what, saw)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rss is a process's resident set size from /proc.
func rss(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "rss unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return "RSS " + strings.TrimSpace(v)
		}
	}
	return "rss unknown"
}

// BenchmarkStartCluster measures a start of a whole control plane until
// the apiserver is ready and the controllers run (Stop not included):
// go test -run '^$' -bench StartCluster -benchtime 5x ./internal/kubetest/
func BenchmarkStartCluster(b *testing.B) {
	if _, err := kubetest.Binaries(); err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		c, err := kubetest.StartCluster()
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		c.Stop()
		b.StartTimer()
	}
}

// TestMissingPiecesNameTheFix checks the errors behind a skip: each names
// what is missing and the command that provides it.
func TestMissingPiecesNameTheFix(t *testing.T) {
	t.Setenv(kubetest.EnvCache, t.TempDir())
	if _, err := kubetest.Binaries(); err == nil || !strings.Contains(err.Error(), kubetest.BuildCommand) {
		t.Errorf("Binaries() in an empty cache = %v, want an error naming %s", err, kubetest.BuildCommand)
	}
	if _, err := kubetest.FindMCPServer(kubetest.KubernetesMCPServer); err == nil || !strings.Contains(err.Error(), kubetest.BuildCommand) {
		t.Errorf("FindMCPServer in an empty cache = %v, want an error naming %s", err, kubetest.BuildCommand)
	}
	if _, err := kubetest.FindMCPServer("kubernetes-mcp"); err == nil || !strings.Contains(err.Error(), `unknown MCP server "kubernetes-mcp"`) {
		t.Errorf("FindMCPServer of an unknown name = %v, want an error naming it", err)
	}
}
