package deployments_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
)

// documents splits a multi-document YAML file.
func documents(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(d, "")) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

// knownVariables are the environment variables opsgate reads: one per key
// (OPSGATE_<SECTION>_<KEY>) and the few the CLI documents.
func knownVariables() []string {
	vars := []string{"OPSGATE_CONFIG", "OPSGATE_LOG_LEVEL"}
	for _, k := range config.KeyPaths() {
		vars = append(vars, config.EnvName(k))
	}
	return vars
}

// checkVariable fails for an OPSGATE_ variable opsgate does not read.
func checkVariable(t *testing.T, where, name string) {
	t.Helper()
	if strings.HasPrefix(name, "OPSGATE_") && !slices.Contains(knownVariables(), name) {
		t.Errorf("%s sets %s, which is not an opsgate key", where, name)
	}
}

// Issue 11, acceptance 10: every manifest decodes strictly into its
// Kubernetes API type; the Deployment has what the issue asks; every
// variable the manifests, the compose file and .env.example set is an
// opsgate key or one the config file references.
func TestManifestsAndComposeValidate(t *testing.T) {
	files, _ := filepath.Glob("kubernetes/*.yaml")
	if len(files) < 5 {
		t.Fatalf("kubernetes/: %d files", len(files))
	}
	kinds := map[string]int{}
	secretKeys := map[string]bool{}
	var deploy appsv1.Deployment
	var cm corev1.ConfigMap
	for _, f := range files {
		for _, doc := range documents(t, f) {
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := sigsyaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj any
			switch meta.APIVersion + " " + meta.Kind {
			case "apps/v1 Deployment":
				obj = &deploy
			case "v1 Service":
				obj = &corev1.Service{}
			case "policy/v1 PodDisruptionBudget":
				obj = &policyv1.PodDisruptionBudget{}
			case "v1 ConfigMap":
				obj = &cm
			case "v1 Secret":
				var s corev1.Secret
				if err := sigsyaml.UnmarshalStrict(doc, &s); err != nil {
					t.Errorf("%s: Secret does not decode strictly: %v", f, err)
				}
				for k := range s.StringData {
					secretKeys[k] = true
					checkVariable(t, f, k)
				}
				obj = &s
			case "kustomize.config.k8s.io/v1beta1 Kustomization":
				continue
			default:
				t.Errorf("%s: unexpected %s %s", f, meta.APIVersion, meta.Kind)
				continue
			}
			if err := sigsyaml.UnmarshalStrict(doc, obj); err != nil {
				t.Errorf("%s: %s does not decode strictly: %v", f, meta.Kind, err)
			}
			kinds[meta.Kind]++
		}
	}
	for _, k := range []string{"Deployment", "Service", "PodDisruptionBudget", "ConfigMap", "Secret"} {
		if kinds[k] != 1 {
			t.Errorf("%d %s manifests, want 1", kinds[k], k)
		}
	}

	// The Deployment.
	if deploy.Spec.Replicas == nil || *deploy.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", deploy.Spec.Replicas)
	}
	pod := deploy.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe = %+v, want GET /healthz", p)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe = %+v, want GET /readyz", p)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container security context = %+v, want a read-only root filesystem and no privilege escalation", sc)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("pod security context = %+v, want runAsNonRoot", psc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources = %+v, want requests and limits", c.Resources)
	}
	for _, e := range c.Env {
		checkVariable(t, "the Deployment", e.Name)
	}

	// The ConfigMap is the shared config files, byte for byte; they load.
	for _, name := range []string{"opsgate.yaml", "policy.yaml"} {
		want, err := os.ReadFile(filepath.Join("config", name))
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data[name] != string(want) {
			t.Errorf("the ConfigMap's %s differs from config/%s", name, name)
		}
	}
	vars := checkConfigFile(t, filepath.Join("config", "opsgate.yaml"))
	if _, err := policy.Load(filepath.Join("config", "policy.yaml"), policy.Options{}); err != nil {
		t.Errorf("config/policy.yaml: %v", err)
	}

	// compose.yaml.
	var compose struct {
		Services map[string]struct {
			EnvFile     any               `yaml:"env_file"`
			Environment map[string]string `yaml:"environment"`
			Healthcheck *struct {
				Test []string `yaml:"test"`
			} `yaml:"healthcheck"`
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	var replicas int
	for name, s := range compose.Services {
		if s.Healthcheck == nil || len(s.Healthcheck.Test) == 0 {
			t.Errorf("compose service %s has no health check", name)
		}
		for k := range s.Environment {
			checkVariable(t, "compose service "+name, k)
		}
		if strings.HasPrefix(name, "opsgate-") {
			replicas++
			for _, v := range s.Volumes {
				src := strings.SplitN(v, ":", 2)[0]
				if _, err := os.Stat(src); err != nil {
					t.Errorf("compose service %s mounts %s: %v", name, src, err)
				}
			}
		}
	}
	if replicas != 2 || compose.Services["postgres"].Healthcheck == nil {
		t.Errorf("compose: %d opsgate replicas and postgres %v; want 2 and a postgres with a health check", replicas, compose.Services["postgres"])
	}

	// .env.example sets what the config file references.
	env, err := os.ReadFile(".env.example")
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, line := range strings.Split(string(env), "\n") {
		if name, _, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			set[name] = true
			checkVariable(t, ".env.example", name)
		}
	}
	for _, v := range vars {
		if !set[v] {
			t.Errorf("config/opsgate.yaml uses ${%s}, which .env.example does not set", v)
		}
		if !secretKeys[v] {
			t.Errorf("config/opsgate.yaml uses ${%s}, which the Secret template does not set", v)
		}
	}
}

// checkConfigFile loads path with the real loader (every ${VAR} set) and
// returns the variables it references.
func checkConfigFile(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vars []string
	uncommented := regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAll(b, nil)
	for _, m := range regexp.MustCompile(`\$\{([A-Z0-9_]+)\}`).FindAllSubmatch(uncommented, -1) {
		vars = append(vars, string(m[1]))
	}
	values := map[string]string{
		"OPSGATE_STORE_URL":    "postgres://opsgate:pw@postgres:5432/opsgate",
		"OPSGATE_LLM_BASE_URL": "https://api.openai.com/v1",
	}
	getenv := func(name string) string {
		if v, ok := values[name]; ok {
			return v
		}
		if slices.Contains(vars, name) {
			return "x-" + strings.ToLower(name)
		}
		return ""
	}
	if _, err := config.Load(path, getenv); err != nil {
		t.Errorf("%s does not load: %v", path, err)
	}
	return vars
}
