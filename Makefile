GO ?= go
BIN := bin/opsgate
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build run test fuzz bench lint tidy clean kube alertmanager

# A release build: no symbol table or DWARF (-s -w: 69 → 50 MB; panics
# still print file:line from pclntab), no build-machine paths (-trimpath).
build:
	$(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(BIN) ./cmd/opsgate

run: build
	./$(BIN) chat

# The one test command (CI runs it through .ci/run): vet, then every test with the race detector.
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# The Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
# kubectl) and the MCP servers the Kubernetes tests use (internal/kubetest),
# built from pinned modules into $$OPSGATE_KUBE_CACHE (default
# ~/.cache/opsgate/kube-v1.37.2): ~15 min the first time, at once after.
kube:
	bash deployments/kube/build.sh

# Prometheus Alertmanager v0.35.0 and amtool for the incident tests
# (internal/amtest), built from the Go module and cached under
# $${OPSGATE_ALERTMANAGER_CACHE:-~/.cache/opsgate/alertmanager-v0.35.0}/bin;
# about 2 minutes cold, instant when cached.
alertmanager:
	GO=$(GO) bash deployments/alertmanager/build.sh

# Every native Go fuzz target, one after another, each for FUZZTIME (CI: 10s;
# longer runs: make fuzz FUZZTIME=5m). go test fuzzes one target per run, so
# the (package, target) pairs are read from the test files themselves: a new
# func FuzzX(f *testing.F) is fuzzed without being listed anywhere. A crasher
# is written to the package's testdata/fuzz/FuzzX/ (commit it with the fix).
FUZZTIME ?= 30s
fuzz:
	GO=$(GO) bash .ci/fuzz $(FUZZTIME)

# The benchmarks of issue #6: one table on stdout, the same as JSON in bench/results.json.
# Plain Go benchmarks still work: go test -run '^$' -bench . -benchmem ./bench/ ./memory/...
bench:
	$(GO) run ./bench/cmd/opsgate-bench -out bench/results.json

# gofmt, go vet and staticcheck, all clean (CI runs it through .ci/run).
# staticcheck is pinned (2026.2.2 understands go 1.26) and comes from the
# module proxy; go run keeps the built tool in the build cache.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# -e: modernc.org/sqlite's own tests import a pprof version the module proxy
# no longer serves; it is not a dependency of opsgate.
tidy:
	$(GO) mod tidy -e

clean:
	rm -rf bin
