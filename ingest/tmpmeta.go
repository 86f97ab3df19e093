package ingest

import (
	"os"

	"github.com/parquet-go/parquet-go"
)

// TEMPORARY until the writers branch lands (parquetio.KeyValues,
// anndata.ReadDicaUns).
func parquetKeyValues(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, kv := range pf.Metadata().KeyValueMetadata {
		out[kv.Key] = kv.Value
	}
	return out, nil
}

func zarrDicaUns(path string) (map[string]string, error) { return nil, nil }
