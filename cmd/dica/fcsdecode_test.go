package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/toy"
)

// decodeFCS31 reads the first data set of a list-mode FCS 3.1 file of
// float32 data as the standard describes it, independently of package fcs:
// the HEADER's TEXT offsets (bytes 10-25), the TEXT segment's keyword/value
// pairs split on its first byte with a doubled delimiter standing for
// itself, and $BEGINDATA, $PAR, $TOT, $BYTEORD and $DATATYPE for the DATA
// segment.
func decodeFCS31(t *testing.T, path string) (map[string]string, [][]float32) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "FCS3.1", string(b[:6]))
	off := func(i int) int {
		v, err := strconv.Atoi(strings.TrimSpace(string(b[10+8*i : 18+8*i])))
		require.NoError(t, err)
		return v
	}
	text := b[off(0) : off(1)+1]
	d := text[0]
	kw := map[string]string{}
	var fields []string
	var cur []byte
	for i := 1; i < len(text); i++ {
		switch {
		case text[i] == d && i+1 < len(text) && text[i+1] == d:
			cur = append(cur, d)
			i++
		case text[i] == d:
			fields = append(fields, string(cur))
			cur = cur[:0]
		default:
			cur = append(cur, text[i])
		}
	}
	require.Zero(t, len(fields)%2, "an odd number of TEXT fields")
	for i := 0; i < len(fields); i += 2 {
		kw[strings.ToUpper(fields[i])] = fields[i+1]
	}
	require.Equal(t, "F", kw["$DATATYPE"])
	require.Equal(t, "L", kw["$MODE"])
	atoi := func(k string) int {
		v, err := strconv.Atoi(strings.TrimSpace(kw[k]))
		require.NoError(t, err, k)
		return v
	}
	par, tot, begin := atoi("$PAR"), atoi("$TOT"), atoi("$BEGINDATA")
	order := binary.ByteOrder(binary.LittleEndian)
	if kw["$BYTEORD"] == "4,3,2,1" {
		order = binary.BigEndian
	}
	require.Equal(t, begin+4*par*tot-1, atoi("$ENDDATA"))
	ev := make([][]float32, tot)
	for i := range ev {
		ev[i] = make([]float32, par)
		for j := range ev[i] {
			p := begin + 4*(i*par+j)
			ev[i][j] = math.Float32frombits(order.Uint32(b[p : p+4]))
		}
	}
	return kw, ev
}

// TestFCSOutputIndependentDecoder writes a transform as FCS and reads it with
// decodeFCS31: every input channel raw, the components, LABEL and DOMAIN,
// named as the keywords say, against Model.Transform of the same cells.
func TestFCSOutputIndependentDecoder(t *testing.T) {
	dir := t.TempDir()
	ds := toy.Classification(toy.Options{Domains: 3, MeanSize: 80, Seed: 12})
	path := writeToyCSV(t, dir, ds)
	model := filepath.Join(dir, "m.dica")
	_, errs, code := runCmd(t, "fit", "--data", path, "--domain", "patient", "--label", "population", "--transform", "asinh:2",
		"--rank", "30", "--sigma", "1", "--out", model, "--quiet")
	require.Equal(t, 0, code, errs)
	out := filepath.Join(dir, "z.fcs")
	_, errs, code = runCmd(t, "transform", "--model", model, "--data", path, "--domain", "patient", "--label", "population", "--out", out, "--quiet")
	require.Equal(t, 0, code, errs)

	kw, ev := decodeFCS31(t, out)
	names := []string{}
	for j := 1; ; j++ {
		n, ok := kw[fmt.Sprintf("$P%dN", j)]
		if !ok {
			break
		}
		names = append(names, n)
	}
	require.Equal(t, []string{"CD1", "CD2", "CD3", "CD4", "CD5", "DICA1", "DICA2", "LABEL", "DOMAIN", "SOURCE", "EVENT"}, names)
	require.Equal(t, "DICA", kw["DICA_METHOD"])
	require.Equal(t, "Appended", kw["$ORIGINALITY"])
	require.Len(t, ev, ds.N())
	m, err := dica.Load(model)
	require.NoError(t, err)
	z, err := m.Transform(ds.X, dica.TransformOptions{}) // the model applies asinh(x/2)
	require.NoError(t, err)
	for i := 0; i < ds.N(); i++ {
		for j := 0; j < 5; j++ {
			require.Equal(t, float32(ds.X.At(i, j)), ev[i][j], "raw channel %d of cell %d", j+1, i)
		}
		for j := 0; j < 2; j++ {
			require.Equal(t, float32(z.At(i, j)), ev[i][5+j], "component %d of cell %d", j+1, i)
		}
		require.Equal(t, ds.ClassNames[ds.Label[i]], kw[fmt.Sprintf("DICA_LABEL%d", int(ev[i][7]))])
		require.Equal(t, ds.DomainNames[ds.Domain[i]], kw[fmt.Sprintf("DICA_DOMAIN%d", int(ev[i][8]))])
		// Cell i is row i+1 of the one source file.
		require.Equal(t, "cells", kw[fmt.Sprintf("DICA_SOURCE%d", int(ev[i][9]))])
		require.Equal(t, float32(i+1), ev[i][10], "event of cell %d", i)
	}
	// The codes are the model's: its classes and domains in natural
	// order, whatever order the file meets them in.
	for k, c := range m.Summary.Classes {
		require.Equal(t, c, kw[fmt.Sprintf("DICA_LABEL%d", k+1)])
	}
	for k, d := range m.Summary.Domains {
		require.Equal(t, d, kw[fmt.Sprintf("DICA_DOMAIN%d", k+1)])
	}
	// The project's reader agrees with it.
	f, err := fcs.Open(out)
	require.NoError(t, err)
	defer f.Close()
	got, err := f.ReadAll(fcs.EventOptions{})
	require.NoError(t, err)
	for i := range ev {
		for j := range ev[i] {
			require.Equal(t, float64(ev[i][j]), got.At(i, j))
		}
	}
}
