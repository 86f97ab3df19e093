package main

import (
	"context"
	"io"
	"os"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/ingest"
)

// loadModel loads the model file of --model, and says what to do with a
// regular file of another kind given in its place. A pipe or device is not
// opened again (its first bytes are gone, and a named pipe's open waits
// for a writer), nor is any file once ctx is done.
func loadModel(ctx context.Context, path string) (*dica.Model, error) {
	m, err := dica.LoadContext(ctx, path, dica.LoadOptions{})
	if err == nil {
		return m, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	if fi, serr := os.Stat(path); serr != nil || !fi.Mode().IsRegular() {
		return nil, err
	}
	f, ferr := os.Open(path)
	if ferr != nil {
		return nil, err
	}
	defer f.Close()
	var head [8]byte
	n, _ := io.ReadFull(f, head[:])
	switch string(head[:n]) {
	case "DICASTAT":
		return nil, usageErr("--model %s is a statistics file (written by dica accumulate), not a model: make the model with 'dica merge %s --out model.dica'", path, path)
	case "DICAPLAN":
		return nil, usageErr("--model %s is a plan file, not a model: fit a model with dica fit", path)
	}
	if ingest.KindOf(path) != ingest.CSV || n == 8 && string(head[:4]) != "DICA" && isText(head[:n]) {
		return nil, usageErr("--model %s is a data file, not a model: give it with --data, and as --model a file written by dica fit", path)
	}
	return nil, err
}

// isText reports whether b looks like the start of a text file.
func isText(b []byte) bool {
	for _, c := range b {
		if c < 9 || c > 126 {
			return false
		}
	}
	return true
}
