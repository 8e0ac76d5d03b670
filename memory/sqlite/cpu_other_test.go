//go:build !unix

package sqlite_test

import "time"

// processCPU is unknown here: BenchmarkSearchDocuments reports no CPU time.
func processCPU() time.Duration { return 0 }
