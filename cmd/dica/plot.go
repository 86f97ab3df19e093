package main

import (
	"context"
	"errors"
	"io"
)

const plotUsage = `Usage: dica plot --model MODEL --data FILES --out FIG.png|FIG.svg

Draw the cells projected by a model, colored by population and by sample.
`

func runPlot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plot", plotUsage, stderr)
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	return errors.New("not implemented yet")
}
