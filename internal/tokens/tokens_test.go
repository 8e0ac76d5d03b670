package tokens

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"
)

// The embedded ranks are OpenAI's cl100k_base file, byte for byte (the
// sha256 tiktoken itself checks), and count as tiktoken does.
func TestEmbeddedRanksAreCl100kBase(t *testing.T) {
	zr, err := gzip.NewReader(bytes.NewReader(cl100k))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, zr); err != nil {
		t.Fatal(err)
	}
	const want = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("embedded cl100k_base sha256 = %s, want %s", got, want)
	}
	ranks, err := embeddedRanks{}.LoadTiktokenBpe("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken")
	if err != nil || len(ranks) != 100256 {
		t.Fatalf("ranks: %d, %v; want 100256", len(ranks), err)
	}
	if err := Err(); err != nil {
		t.Fatal(err)
	}
	for s, n := range map[string]int{"hello world": 2, "tiktoken is great!": 6, "": 0} {
		if got := Count(s); got != n {
			t.Errorf("Count(%q) = %d, want %d", s, got, n)
		}
	}
	if _, err := (embeddedRanks{}).LoadTiktokenBpe("o200k_base.tiktoken"); err == nil {
		t.Error("o200k_base loaded although only cl100k_base is embedded")
	}
}
