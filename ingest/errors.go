package ingest

import (
	"fmt"

	"github.com/dicalab/dica/dataset"
)

// optErr returns a *dataset.OptionError for the option opt holding value v.
func optErr(opt string, v any, format string, args ...any) error {
	return &dataset.OptionError{Pkg: "ingest", Option: opt, Value: v, Err: fmt.Errorf(format, args...)}
}
