package tokens

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"fmt"
	"path"
	"strconv"
)

// cl100k is OpenAI's cl100k_base.tiktoken (sha256 223921b7…65b2a7, as
// tiktoken-go-loader v0.0.2 ships it), gzipped. tiktoken-go-loader embeds
// four encodings, 7 MB of the binary, of which opsgate reads one.
//
//go:embed cl100k_base.tiktoken.gz
var cl100k []byte

// embeddedRanks is tiktoken-go's BPE loader for the embedded ranks.
type embeddedRanks struct{}

// LoadTiktokenBpe reads the ranks of the encoding whose file tiktoken-go
// names (a URL ending in cl100k_base.tiktoken): lines "<base64 token> <rank>".
func (embeddedRanks) LoadTiktokenBpe(file string) (map[string]int, error) {
	if name := path.Base(file); name != Encoding+".tiktoken" {
		return nil, fmt.Errorf("tokens: %s is not embedded (only %s is)", name, Encoding)
	}
	zr, err := gzip.NewReader(bytes.NewReader(cl100k))
	if err != nil {
		return nil, fmt.Errorf("tokens: reading the embedded ranks: %w", err)
	}
	ranks := make(map[string]int, 100256)
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		tok, num, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			return nil, fmt.Errorf("tokens: malformed rank line %q", line)
		}
		t, err := base64.StdEncoding.AppendDecode(nil, tok)
		if err != nil {
			return nil, fmt.Errorf("tokens: rank line %q: %w", line, err)
		}
		rank, err := strconv.Atoi(string(num))
		if err != nil {
			return nil, fmt.Errorf("tokens: rank line %q: %w", line, err)
		}
		ranks[string(t)] = rank
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokens: reading the embedded ranks: %w", err)
	}
	return ranks, nil
}
