package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/dicalab/dica/fcs"
)

const infoUsage = `Usage: dica info [--json] FILE.fcs...

Describe FCS files: version, data type, byte order, number of events, the
channels (name $PnN, marker $PnS, bits, range) and the first and last events,
as a cytometrist would check a file before a fit.

Examples:

  dica info sample.fcs
  dica info --json sample.fcs | jq .parameters
`

func runInfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("info", infoUsage, stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := expand(fs.Args(), "files")
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErr("no file")
	}
	for i, path := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := fcs.Open(path)
		if err != nil {
			return err
		}
		in, err := f.Info()
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if *asJSON {
			b, err := json.Marshal(in)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\n", b)
			continue
		}
		if len(files) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "%s\n", path)
		}
		if err := in.WriteText(stdout); err != nil {
			return err
		}
	}
	return nil
}
