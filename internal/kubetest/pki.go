package kubetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is what the control plane's TLS and service accounts need, written
// as PEM files into a directory: a CA, a serving certificate it signed for
// 127.0.0.1, and a key pair that signs service-account tokens. ECDSA P-256
// throughout: generating it takes microseconds, where RSA takes a while on
// a loaded machine.
type pki struct {
	caCert, caKey       string // ca.crt, ca.key
	serveCert, serveKey string // apiserver.crt, apiserver.key
	saKey, saPub        string // sa.key, sa.pub
	caPEM               []byte
}

// writePKI generates the files into dir.
func writePKI(dir string) (*pki, error) {
	p := &pki{
		caCert: filepath.Join(dir, "ca.crt"), caKey: filepath.Join(dir, "ca.key"),
		serveCert: filepath.Join(dir, "apiserver.crt"), serveKey: filepath.Join(dir, "apiserver.key"),
		saKey: filepath.Join(dir, "sa.key"), saPub: filepath.Join(dir, "sa.pub"),
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "opsgate-kubetest-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, err
	}

	serveKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serve := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// 10.0.0.1 is the kubernetes Service's address in the service
		// range the apiserver is started with.
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}
	serveDER, err := x509.CreateCertificate(rand.Reader, serve, ca, &serveKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}

	p.caPEM = pemBlock("CERTIFICATE", caDER)
	files := []struct {
		path string
		data []byte
	}{
		{p.caCert, p.caPEM},
		{p.serveCert, pemBlock("CERTIFICATE", serveDER)},
		{p.saPub, pemBlock("PUBLIC KEY", saPub)},
	}
	for _, k := range []struct {
		path string
		key  *ecdsa.PrivateKey
	}{{p.caKey, caKey}, {p.serveKey, serveKey}, {p.saKey, saKey}} {
		der, err := x509.MarshalECPrivateKey(k.key)
		if err != nil {
			return nil, err
		}
		files = append(files, struct {
			path string
			data []byte
		}{k.path, pemBlock("EC PRIVATE KEY", der)})
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
