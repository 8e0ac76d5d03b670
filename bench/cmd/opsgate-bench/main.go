// Command opsgate-bench runs opsgate's benchmarks (issue #6) and prints one
// table: each figure as measured, its target, and whether it passes. The
// same report is written as JSON (bench/results.json by default). `make
// bench` runs it from the repository root.
//
// A figure that misses its target is a result, not a failure: the command
// exits 1 only when a figure could not be measured.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/opsgate/opsgate/bench"
)

func main() {
	out := flag.String("out", "bench/results.json", "write the report as JSON to this file (empty: do not write)")
	only := flag.String("only", "", "comma-separated figures to run (1-13, e.g. 2,3,13); empty runs all")
	merge := flag.Bool("merge", false, "keep the rows of the figures not run from the -out file (with -only)")
	baseline := flag.String("baseline", "", "figure 12's baseline revision (default: $BENCH_BASELINE, else the newest tag before HEAD, else "+bench.RoundOneBaseline+")")
	quick := flag.Bool("quick", false, "smoke-test sizes: every path runs, the numbers mean nothing")
	timeout := flag.Duration("timeout", 11*time.Minute, "give up after this long")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	opt := bench.Options{Quick: *quick, Side: bench.SideOptions{Baseline: *baseline}}
	if *only != "" {
		opt.Only = strings.Split(*only, ",")
	}
	r := bench.Run(ctx, opt, os.Stderr)
	fmt.Println()
	r.Print(os.Stdout)
	if *out != "" {
		if *merge {
			if err := r.MergeFile(*out); err != nil {
				fmt.Fprintf(os.Stderr, "opsgate-bench: %v\n", err)
				os.Exit(1)
			}
		}
		if err := r.WriteJSON(*out); err != nil {
			fmt.Fprintf(os.Stderr, "opsgate-bench: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("report written to %s\n", *out)
	}
	if len(r.Errors) > 0 {
		os.Exit(1)
	}
}
