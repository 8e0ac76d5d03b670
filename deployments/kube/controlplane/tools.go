//go:build tools

// Package controlplane pins the Kubernetes commands that ../build.sh
// builds; importing them lets go mod tidy record every go.sum entry.
package controlplane

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
