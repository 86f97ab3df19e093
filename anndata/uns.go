package anndata

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/dicalab/dica/anndata/internal/zarr"
)

// maxUnsEntries bounds the number of entries of uns/dica ReadDicaUns looks
// at.
const maxUnsEntries = 1024

// ReadDicaUns returns the string scalars under uns["dica"] of the AnnData
// store at path, by key: those a Writer records (method, digest, layout,
// preprocessing) and any other string stored there as a 0-dimensional
// array (numpy fixed-width or vlen-utf8 strings, as anndata writes them).
// Numbers, arrays and groups under uns["dica"] are left out. A store
// without uns["dica"] gives a nil map and no error.
//
// Memory is bounded: at most 1024 entries are looked at, each array's
// metadata is checked before its chunk is read, and the strings together
// may take at most 64 MiB (zarr.DefaultMaxChunkBytes) decoded.
func ReadDicaUns(path string) (map[string]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	fsys := os.DirFS(path)
	if !fi.IsDir() || !zarr.IsGroup(fsys, ".") {
		return nil, fmt.Errorf("%s: not an AnnData Zarr store (a folder with .zgroup)", path)
	}
	attrs, err := zarr.Attrs(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if t := zarr.AttrString(attrs, "encoding-type"); t != "" && t != "anndata" {
		return nil, fmt.Errorf("%s: encoding-type %q; not an AnnData store", path, t)
	}
	m, err := readDicaUns(fsys, zarr.Limits{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// readDicaUns reads the string scalars of uns/dica of the store at the
// root of fsys, which may take lim.Max() bytes together.
func readDicaUns(fsys fs.FS, lim zarr.Limits) (map[string]string, error) {
	const dir = "uns/dica"
	if !zarr.IsGroup(fsys, dir) {
		return nil, nil
	}
	f, err := fsys.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	var names []string
	for {
		ents, err := d.ReadDir(256)
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") && e.IsDir() {
				names = append(names, e.Name())
			}
		}
		if len(names) > maxUnsEntries {
			return nil, fmt.Errorf("%s holds over %d entries; not dica's", dir, maxUnsEntries)
		}
		if errors.Is(err, io.EOF) || err == nil && len(ents) == 0 {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	}
	slices.Sort(names)
	left := lim.Max()
	m := map[string]string{}
	for _, name := range names {
		p := path.Join(dir, name)
		if !zarr.IsArray(fsys, p) {
			continue
		}
		a, err := zarr.OpenArray(fsys, p, p, lim)
		if err != nil {
			return nil, err
		}
		if len(a.Shape) != 0 {
			continue
		}
		switch a.DType.Kind {
		case zarr.UTF32, zarr.Bytes, zarr.Object:
		default:
			continue
		}
		// The bound of the decoded chunk: its fixed size, or what is left of
		// the bound of all strings for a vlen-utf8 one.
		need := int64(a.DType.Size)
		if a.DType.Kind == zarr.Object {
			need = left
		}
		if left <= 0 || need > left {
			return nil, fmt.Errorf("%s: the strings take over %s", dir, sizeText(lim.Max()))
		}
		c, err := a.ReadChunk(zarr.Limits{MaxChunkBytes: left})
		if err != nil {
			return nil, err
		}
		if len(c.Strings) != 1 {
			return nil, fmt.Errorf("array %s: %d strings in a scalar", p, len(c.Strings))
		}
		m[name] = c.Strings[0]
		if a.DType.Kind == zarr.Object {
			left -= 8 + int64(len(c.Strings[0])) // its vlen-utf8 encoding
		} else {
			left -= int64(a.DType.Size)
		}
	}
	return m, nil
}

// sizeText writes a size in bytes, in MiB when it is a whole number of
// them.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
