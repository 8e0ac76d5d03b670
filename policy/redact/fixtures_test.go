package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A doc is a text with the secrets it holds: no 8 bytes of one may ever be
// released. want, when set, is the whole redacted text.
type doc struct {
	name    string
	text    string
	want    string
	secrets []string
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	alnums      = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b64Chars    = alnums + "+/"
	b64URLChars = alnums + "-_"
)

func randFrom(rng *rand.Rand, chars string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[rng.IntN(len(chars))]
	}
	return string(b)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// toolResultDoc is a tool result with one secret of each common kind: an
// AWS key pair, a PEM private key, a JWT, a database URL with a password and
// a Kubernetes Secret as kubectl prints it.
func toolResultDoc() doc {
	rng := rand.New(rand.NewPCG(10, 5))
	awsID := "AKIA" + randFrom(rng, upperDigits, 16)
	awsSecret := randFrom(rng, b64Chars, 40)
	var pem []string
	for range 6 {
		pem = append(pem, randFrom(rng, b64Chars, 64))
	}
	pem = append(pem, randFrom(rng, b64Chars, 30)+"==")
	jwt := "eyJhbGciOiJSUzI1NiIsImtpZCI6InByb2QifQ.eyJ" + randFrom(rng, b64URLChars, 120) + "." + randFrom(rng, b64URLChars, 86)
	dbPass := randFrom(rng, alnums, 8) + "&!" + randFrom(rng, alnums, 6)
	user := b64("svc-" + randFrom(rng, alnums, 10))
	pass := b64(randFrom(rng, alnums, 24))

	text := `$ cat ~/.aws/credentials
[default]
aws_access_key_id = ` + awsID + `
aws_secret_access_key = ` + awsSecret + `
region = eu-west-1
$ cat deploy/id_rsa
-----BEGIN RSA PRIVATE KEY-----
` + strings.Join(pem, "\n") + `
-----END RSA PRIVATE KEY-----
$ kubectl -n prod create token deployer
` + jwt + `
$ env | grep DATABASE
DATABASE_URL=postgres://orders:` + dbPass + `@db.prod.internal:5432/orders?sslmode=require
$ kubectl -n prod get secret db-credentials -o yaml
apiVersion: v1
data:
  password: ` + pass + `
  username: ` + user + `
kind: Secret
metadata:
  creationTimestamp: "2024-05-01T10:00:00Z"
  name: db-credentials
  namespace: prod
  uid: 6f1c2a4e-8b3d-4c5e-9f7a-1b2c3d4e5f60
type: Opaque
`
	want := `$ cat ~/.aws/credentials
[default]
aws_access_key_id = [REDACTED:aws_access_key]
aws_secret_access_key = [REDACTED:aws_secret_key]
region = eu-west-1
$ cat deploy/id_rsa
[REDACTED:private_key]
$ kubectl -n prod create token deployer
[REDACTED:jwt]
$ env | grep DATABASE
DATABASE_URL=postgres://orders:[REDACTED:url_password]@db.prod.internal:5432/orders?sslmode=require
$ kubectl -n prod get secret db-credentials -o yaml
apiVersion: v1
data:
  password: [REDACTED:k8s_secret_data]
  username: [REDACTED:k8s_secret_data]
kind: Secret
metadata:
  creationTimestamp: "2024-05-01T10:00:00Z"
  name: db-credentials
  namespace: prod
  uid: 6f1c2a4e-8b3d-4c5e-9f7a-1b2c3d4e5f60
type: Opaque
`
	secrets := append([]string{awsID, awsSecret, jwt, dbPass, user, pass}, pem...)
	return doc{name: "tool result", text: text, want: want, secrets: secrets}
}

// jsonSecretDoc is kubectl get secret -o json, with the manifest repeated
// escaped in the last-applied-configuration annotation.
func jsonSecretDoc() doc {
	rng := rand.New(rand.NewPCG(11, 5))
	tok := b64(randFrom(rng, alnums, 32))
	key := b64(randFrom(rng, alnums, 20))
	text := `{
    "apiVersion": "v1",
    "data": {
        "api-key": "` + key + `",
        "token": "` + tok + `"
    },
    "kind": "Secret",
    "metadata": {
        "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"v1\",\"data\":{\"api-key\":\"` + key + `\",\"token\":\"` + tok + `\"},\"kind\":\"Secret\",\"metadata\":{\"name\":\"api\"}}\n"
        },
        "name": "api",
        "namespace": "prod"
    },
    "type": "Opaque"
}
`
	want := `{
    "apiVersion": "v1",
    "data": {
        "api-key": "[REDACTED:k8s_secret_data]",
        "token": "[REDACTED:k8s_secret_data]"
    },
    "kind": "Secret",
    "metadata": {
        "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"v1\",\"data\":{\"api-key\":\"[REDACTED:k8s_secret_data]\",\"token\":\"[REDACTED:k8s_secret_data]\"},\"kind\":\"Secret\",\"metadata\":{\"name\":\"api\"}}\n"
        },
        "name": "api",
        "namespace": "prod"
    },
    "type": "Opaque"
}
`
	return doc{name: "secret json", text: text, want: want, secrets: []string{tok, key}}
}

// kubeconfigDoc is kubectl config view --raw.
func kubeconfigDoc() doc {
	rng := rand.New(rand.NewPCG(12, 5))
	cert := b64("-----BEGIN CERTIFICATE-----\n" + randFrom(rng, b64Chars, 64) + "\n-----END CERTIFICATE-----\n")
	key := b64("-----BEGIN RSA PRIVATE KEY-----\n" + randFrom(rng, b64Chars, 64) + "\n-----END RSA PRIVATE KEY-----\n")
	tok := randFrom(rng, alnums, 40)
	pw := randFrom(rng, alnums, 16)
	text := `apiVersion: v1
clusters:
- cluster:
    server: https://10.0.0.1:6443
  name: prod
users:
- name: admin
  user:
    client-certificate-data: ` + cert + `
    client-key-data: ` + key + `
- name: ci
  user:
    token: ` + tok + `
- name: legacy
  user:
    username: admin
    password: ` + pw + `
`
	want := `apiVersion: v1
clusters:
- cluster:
    server: https://10.0.0.1:6443
  name: prod
users:
- name: admin
  user:
    client-certificate-data: [REDACTED:kubeconfig]
    client-key-data: [REDACTED:kubeconfig]
- name: ci
  user:
    token: [REDACTED:kubeconfig]
- name: legacy
  user:
    username: admin
    password: [REDACTED:kubeconfig]
`
	return doc{name: "kubeconfig", text: text, want: want, secrets: []string{cert, key, tok, pw}}
}

// chatDoc is a model reply that repeats secrets in prose, in Markdown and
// with non-ASCII text around them.
func chatDoc() doc {
	rng := rand.New(rand.NewPCG(13, 5))
	gh := "ghp_" + randFrom(rng, alnums, 36)
	slack := "xoxb-" + randFrom(rng, "0123456789", 12) + "-" + randFrom(rng, alnums, 24)
	oai := "sk-proj-" + randFrom(rng, b64URLChars, 48)
	pw := randFrom(rng, alnums, 14)
	text := "Voilà — I found the credentials 🔑 in the job's env:\n\n" +
		"- `GITHUB_TOKEN` is " + gh + " (scopes: repo)\n" +
		"- the Slack bot uses " + slack + ".\n" +
		"- OPENAI_API_KEY=" + oai + "\n" +
		"```\ncurl -H \"Authorization: Bearer " + pw + "\" https://api.example.com/v1/ping\n```\n" +
		"Please rotate them — 请轮换密钥.\n"
	want := "Voilà — I found the credentials 🔑 in the job's env:\n\n" +
		"- `GITHUB_TOKEN` is [REDACTED:github_token] (scopes: repo)\n" +
		"- the Slack bot uses [REDACTED:slack_token].\n" +
		"- OPENAI_API_KEY=[REDACTED:password_assignment]\n" +
		"```\ncurl -H \"Authorization: Bearer [REDACTED:authorization]\" https://api.example.com/v1/ping\n```\n" +
		"Please rotate them — 请轮换密钥.\n"
	return doc{name: "chat", text: text, want: want, secrets: []string{gh, slack, oai, pw}}
}

// ordinaryDocs are the texts of testdata/ordinary: ops output with no
// secret in it, which must come out unchanged.
func ordinaryDocs(tb testing.TB) []doc {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "ordinary", "*"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no ordinary texts: %v", err)
	}
	var docs []doc
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, doc{name: filepath.Base(p), text: string(b), want: string(b)})
	}
	return docs
}

func corpus(tb testing.TB) []doc {
	return append([]doc{toolResultDoc(), jsonSecretDoc(), kubeconfigDoc(), chatDoc()}, ordinaryDocs(tb)...)
}

func mustNew(tb testing.TB, o Options) *Redactor {
	tb.Helper()
	r, err := New(o)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// split cuts text into fragments of 1 to maxLen bytes (so also inside a
// multi-byte rune).
func split(text string, rng *rand.Rand, maxLen int) []string {
	var frags []string
	for len(text) > 0 {
		n := min(1+rng.IntN(maxLen), len(text))
		frags = append(frags, text[:n])
		text = text[n:]
	}
	return frags
}

// leak returns the first 8-byte piece of one of secrets that text holds.
func leak(text string, secrets []string) string {
	for _, s := range secrets {
		for i := 0; i+8 <= len(s); i++ {
			if strings.Contains(text, s[i:i+8]) {
				return s[i : i+8]
			}
		}
	}
	return ""
}

// streamChecked streams frags and fails as soon as a released text shows 8
// bytes of a secret; it returns everything released.
func streamChecked(t *testing.T, r *Redactor, frags []string, secrets []string) string {
	t.Helper()
	s := r.Stream()
	shown := ""
	release := func(got string, after string) {
		t.Helper()
		from := max(0, len(shown)-7) // a new piece ends in what was just released
		shown += got
		if p := leak(shown[from:], secrets); p != "" {
			t.Fatalf("after %s, the released text shows %q of a secret:\n%s", after, p, shown)
		}
		if s.Text() != shown {
			t.Fatalf("Text() = %q, want everything released %q", s.Text(), shown)
		}
	}
	for i, f := range frags {
		release(s.Write(f), "fragment "+strconv.Itoa(i))
	}
	release(s.Flush(), "Flush")
	return shown
}
