package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Results of a row.
const (
	Pass = "pass"
	Miss = "miss"
	Info = "info" // reported, no target
)

// Row is one line of the table: a figure as measured against its target.
type Row struct {
	Figure   string `json:"figure"`
	Measured string `json:"measured"`
	Target   string `json:"target"`
	Result   string `json:"result"`
	// Note says how it was measured and, for a miss, the cause.
	Note string `json:"note,omitempty"`
	// Metrics are the raw numbers behind Measured.
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Report is what one run of the benchmarks found; it is written as JSON.
type Report struct {
	Time       time.Time `json:"time"`
	CPU        string    `json:"cpu"`
	Cores      int       `json:"cores"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	Go         string    `json:"go"`
	OS         string    `json:"os"`
	Tokenizer  string    `json:"tokenizer"`
	Duration   string    `json:"duration"`
	Rows       []Row     `json:"rows"`
	Errors     []string  `json:"errors,omitempty"`
}

func newReport() *Report {
	return &Report{
		Time: time.Now().UTC(), CPU: cpuModel(), Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		Tokenizer: Encoding + " (github.com/pkoukk/tiktoken-go, BPE ranks embedded by internal/tokens)",
	}
}

// Print writes the table.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "opsgate benchmarks — %s, %d cores (GOMAXPROCS %d), %s, %s\n\n", r.CPU, r.Cores, r.GOMAXPROCS, r.Go, r.OS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tMEASURED\tTARGET\tRESULT\tNOTE")
	var notes []string
	for _, row := range r.Rows {
		note := ""
		if row.Note != "" {
			notes = append(notes, row.Note)
			note = fmt.Sprintf("[%d]", len(notes))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", row.Figure, row.Measured, row.Target, row.Result, note)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for i, n := range notes {
		fmt.Fprintf(w, "[%d] %s\n", i+1, n)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "\nERROR: %s\n", e)
	}
	fmt.Fprintf(w, "\ntokens: %s; total time %s\n", r.Tokenizer, r.Duration)
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "<=" readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// FigureOf is the figure a row belongs to: "11" for "11. …".
func FigureOf(row Row) string {
	id, _, _ := strings.Cut(row.Figure, ".")
	return id
}

// MergeFile keeps, from the report at path (when there is one), the rows of
// the figures this report did not measure, in the order with this
// report's own. The report's time, machine and duration stay this run's.
func (r *Report) MergeFile(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var old Report
	if err := json.Unmarshal(b, &old); err != nil {
		return fmt.Errorf("bench: %s: %w", path, err)
	}
	ran := map[string]bool{}
	for _, row := range r.Rows {
		ran[FigureOf(row)] = true
	}
	byFigure := map[string][]Row{}
	for _, row := range old.Rows {
		if id := FigureOf(row); !ran[id] {
			byFigure[id] = append(byFigure[id], row)
		}
	}
	for _, row := range r.Rows {
		byFigure[FigureOf(row)] = append(byFigure[FigureOf(row)], row)
	}
	ids := make([]string, 0, len(byFigure))
	for id := range byFigure {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, errA := strconv.Atoi(ids[i])
		b, errB := strconv.Atoi(ids[j])
		if errA != nil || errB != nil {
			return ids[i] < ids[j]
		}
		return a < b
	})
	r.Rows = nil
	for _, id := range ids {
		r.Rows = append(r.Rows, byFigure[id]...)
	}
	return nil
}

// cpuModel is lscpu's "Model name", read from /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func verdict(ok bool) string {
	if ok {
		return Pass
	}
	return Miss
}

// percentile returns the p-th percentile (0..100) of ds, nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
