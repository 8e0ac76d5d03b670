package kubetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/internal/proctest"
)

// startTimeout bounds a start until every part answers. It is 3–4 s on an
// idle machine; a machine running eight test suites at once needs more.
const startTimeout = 3 * time.Minute

// User is the test user of every cluster: in system:masters, so RBAC
// allows it everything. Its token is Cluster.Token.
const User = "opsgate-test"

// Cluster is a running control plane. Its fields are read-only.
type Cluster struct {
	// Dir holds the certificates, kubeconfigs, etcd's data and each
	// process's log (<name>.log); it is removed by Stop.
	Dir string
	// Kubeconfig is a kubeconfig file for User, with the CA inline and
	// namespace default.
	Kubeconfig string
	// Server is the apiserver's URL, https://127.0.0.1:<port>.
	Server string
	// Token is User's bearer token.
	Token string
	// CA is the PEM certificate that signed the apiserver's.
	CA []byte

	bin   string
	procs []*proc // in start order

	mu       sync.Mutex
	stopped  bool
	names    map[string]bool // namespaces handed out by Namespace
	httpOnce sync.Once
	http     *http.Client
}

// proc is one process of the control plane.
type proc struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{} // closed once reaped
	err    error         // Wait's, valid after exited
}

// Start starts a control plane for t alone and stops it when t ends; a
// test that can share one should use Shared. Without the binaries it
// skips t (fails it under CI=true).
func Start(t testing.TB) *Cluster {
	t.Helper()
	_, err := Binaries()
	need(t, "Kubernetes control plane", err)
	c, err := StartCluster()
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

var shared struct {
	mu   sync.Mutex
	c    *Cluster
	err  error
	done bool
}

// Shared returns the package's control plane, starting it on first use;
// Main (or StopShared) stops it. Tests sharing it should work in their own
// namespaces (Namespace). Without the binaries it skips t (fails it under
// CI=true).
func Shared(t testing.TB) *Cluster {
	t.Helper()
	_, err := Binaries()
	need(t, "Kubernetes control plane", err)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.done {
		shared.done = true
		shared.c, shared.err = StartCluster()
	}
	if shared.err != nil {
		t.Fatalf("kubetest: %v", shared.err)
	}
	return shared.c
}

// StopShared stops the cluster Shared started, if any. Call it after
// m.Run in a TestMain that does more than Main.
func StopShared() {
	shared.mu.Lock()
	c := shared.c
	shared.mu.Unlock()
	if c != nil {
		c.Stop()
	}
}

// Main runs the tests and stops the shared cluster: from TestMain,
// os.Exit(kubetest.Main(m)).
func Main(m *testing.M) int {
	defer StopShared()
	return m.Run()
}

// StartCluster starts etcd, kube-apiserver and kube-controller-manager on
// free ports of 127.0.0.1 and waits until the apiserver is ready and the
// controllers run. The caller must Stop it.
func StartCluster() (*Cluster, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	sweep()
	dir, err := os.MkdirTemp("", "opsgate-kube-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin, names: map[string]bool{}}
	if err := c.start(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start() error {
	began := time.Now()
	p, err := writePKI(c.Dir)
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	c.CA = p.caPEM
	ports, err := proctest.FreePorts(4)
	if err != nil {
		return err
	}
	etcdPort, peerPort, apiPort, kcmPort := ports[0], ports[1], ports[2], ports[3]
	c.Server = "https://127.0.0.1:" + strconv.Itoa(apiPort)

	c.Token = randomHex()
	kcmToken := randomHex()
	tokens := filepath.Join(c.Dir, "tokens.csv")
	// token,user,uid,"group,..."
	csv := fmt.Sprintf("%s,%s,1,\"system:masters\"\n%s,system:kube-controller-manager,2,\"system:masters\"\n",
		c.Token, User, kcmToken)
	if err := os.WriteFile(tokens, []byte(csv), 0o600); err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := c.writeKubeconfig(c.Kubeconfig, User, c.Token); err != nil {
		return err
	}
	kcmConfig := filepath.Join(c.Dir, "kube-controller-manager.kubeconfig")
	if err := c.writeKubeconfig(kcmConfig, "system:kube-controller-manager", kcmToken); err != nil {
		return err
	}

	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	if err := c.run("etcd",
		"--name=kubetest",
		"--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=kubetest="+peerURL,
		// A test cluster lives minutes: durability buys nothing.
		"--unsafe-no-fsync",
		"--log-level=warn",
	); err != nil {
		return err
	}
	if err := c.run("kube-apiserver",
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(apiPort),
		"--cert-dir="+filepath.Join(c.Dir, "apiserver-certs"),
		"--tls-cert-file="+p.serveCert,
		"--tls-private-key-file="+p.serveKey,
		"--client-ca-file="+p.caCert,
		"--token-auth-file="+tokens,
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		// No kubelet or Service proxy: nothing would answer at the
		// kubernetes Service's endpoints anyway.
		"--endpoint-reconciler-type=none",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+p.saPub,
		"--service-account-signing-key-file="+p.saKey,
	); err != nil {
		return err
	}
	// The controller manager fails at once when the apiserver does not
	// answer yet; start it once it does.
	if err := c.waitHTTP(began, "kube-apiserver", c.Server+"/readyz", c.Token, c.client()); err != nil {
		return err
	}
	if err := c.run("kube-controller-manager",
		"--kubeconfig="+kcmConfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(kcmPort),
		"--cert-dir="+filepath.Join(c.Dir, "kcm-certs"),
		"--root-ca-file="+p.caCert,
		"--service-account-private-key-file="+p.saKey,
		"--cluster-signing-cert-file="+p.caCert,
		"--cluster-signing-key-file="+p.caKey,
	); err != nil {
		return err
	}
	// Its serving certificate is self-signed; /healthz needs no token.
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	if err := c.waitHTTP(began, "kube-controller-manager", "https://127.0.0.1:"+strconv.Itoa(kcmPort)+"/healthz", "", insecure); err != nil {
		return err
	}
	// Pods need the namespace's default service account, which the
	// controllers create: once it exists in default, they are at work.
	return c.waitHTTP(began, "kube-controller-manager (service account default/default)",
		c.Server+"/api/v1/namespaces/default/serviceaccounts/default", c.Token, c.client())
}

// run starts a control-plane binary with its output in <Dir>/<name>.log.
func (c *Cluster) run(name string, args ...string) error {
	log, err := os.Create(filepath.Join(c.Dir, name+".log"))
	if err != nil {
		return err
	}
	defer log.Close() // the child has its own copy
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.Dir
	cmd.Stdout, cmd.Stderr = log, log
	p := &proc{name: name, cmd: cmd, log: log.Name(), exited: make(chan struct{})}
	if err := proctest.Start(cmd); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	c.procs = append(c.procs, p)
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return nil
}

// waitHTTP polls url until it answers 200, failing early when a process
// of the cluster has exited (with the end of its log).
func (c *Cluster) waitHTTP(began time.Time, what, url, token string, client *http.Client) error {
	deadline := began.Add(startTimeout)
	var last string
	for {
		for _, p := range c.procs {
			select {
			case <-p.exited:
				return fmt.Errorf("%s exited while starting (%v); the end of %s:\n%s", p.name, p.err, p.log, tail(p.log))
			default:
			}
		}
		status, body, err := get(client, url, token)
		switch {
		case err != nil:
			last = err.Error()
		case status == http.StatusOK:
			return nil
		default:
			last = fmt.Sprintf("%d %s", status, strings.TrimSpace(body))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s (%s: %s); logs in %s", what, startTimeout, url, last, c.Dir)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func get(client *http.Client, url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	return resp.StatusCode, string(body), nil
}

// client is an HTTP client that trusts the cluster's CA.
func (c *Cluster) client() *http.Client {
	c.httpOnce.Do(func() {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(c.CA)
		c.http = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool},
		}}
	})
	return c.http
}

// Stop stops every process by its PID (the controller manager first,
// etcd last), gives each a few seconds to exit on SIGTERM, kills what is
// left and removes Dir. It is safe to call more than once.
func (c *Cluster) Stop() {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped = true
	c.mu.Unlock()
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		proctest.Stop(p.cmd.Process.Pid, p.exited, 5*time.Second)
	}
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
	os.RemoveAll(c.Dir)
}

// PIDs returns the process id of each part by name (etcd,
// kube-apiserver, kube-controller-manager).
func (c *Cluster) PIDs() map[string]int {
	m := map[string]int{}
	for _, p := range c.procs {
		m[p.name] = p.cmd.Process.Pid
	}
	return m
}

// Env is the environment to give an MCP server (tools.ServerConfig.Env,
// the env key of a tools.servers entry): KUBECONFIG, and PATH with the
// cached kubectl first (mcp-server-kubernetes shells out to kubectl).
func (c *Cluster) Env() map[string]string {
	return map[string]string{
		"KUBECONFIG": c.Kubeconfig,
		"PATH":       c.bin + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
}

// Environ is this process's environment with Env's entries in place of
// its own, for an exec.Cmd.
func (c *Cluster) Environ() []string {
	env := c.Env()
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := env[k]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// Kubectl runs the cached kubectl against the cluster as User and returns
// its stdout; it fails t with stderr when kubectl fails.
func (c *Cluster) Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	return c.KubectlIn(t, "", args...)
}

// KubectlIn is Kubectl with stdin (kubectl apply -f -).
func (c *Cluster) KubectlIn(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, err := c.TryKubectl(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// TryKubectl runs kubectl with stdin and returns its stdout, or an error
// with its stderr, for a test that expects kubectl to fail.
func (c *Cluster) TryKubectl(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath(), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// Namespace creates a namespace for t and deletes it when t ends. It is
// called name unless this cluster already handed that name out (a shared
// cluster, another test): then name-2, name-3, ….
func (c *Cluster) Namespace(t testing.TB, name string) string {
	t.Helper()
	c.mu.Lock()
	ns := name
	for i := 2; c.names[ns]; i++ {
		ns = name + "-" + strconv.Itoa(i)
	}
	c.names[ns] = true
	c.mu.Unlock()
	c.Kubectl(t, "create", "namespace", ns)
	t.Cleanup(func() {
		// Without waiting: the namespace controller finishes it later,
		// and its name is never handed out again.
		_, _ = c.TryKubectl("", "delete", "namespace", ns, "--wait=false")
	})
	return ns
}

// writeKubeconfig writes a kubeconfig for user with a bearer token.
func (c *Cluster) writeKubeconfig(path, user, token string) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubetest
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: kubetest
  context:
    cluster: kubetest
    user: %s
    namespace: default
current-context: kubetest
`, c.Server, base64.StdEncoding.EncodeToString(c.CA), user, token, user)
	return os.WriteFile(path, []byte(cfg), 0o600)
}

// sweep removes the directories of clusters whose test binary died
// without its cleanups (the kernel killed their processes, but nothing
// removed their files).
func sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "opsgate-kube-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner"))
		if err != nil {
			continue // not (yet) a cluster's
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid != os.Getpid() && !proctest.Alive(pid) {
			os.RemoveAll(d)
		}
	}
}

func randomHex() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// tail is the last lines of a log file.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	const keep = 3 << 10
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}
