// Package deployments holds what runs opsgate in production: the
// Dockerfile, a compose file with PostgreSQL and two replicas, and
// Kubernetes manifests. Its test decodes every manifest strictly into the
// Kubernetes API types and checks that every environment variable they set
// is one opsgate reads (there is no Docker engine or cluster in CI).
package deployments
