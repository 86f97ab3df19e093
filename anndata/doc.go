// Package anndata writes and reads AnnData stores (the data model of scanpy
// and pytometry) in the Zarr v2 on-disk format, as streams: a Writer
// writes cells block by block, and a Source reads a store as a
// dataset.Source, chunk by chunk, so neither holds the cells in memory.
//
// A store written here opens in Python with anndata.read_zarr (checked
// against anndata 0.8 and zarr 2.13):
//
//	import anndata
//	a = anndata.read_zarr("cells.zarr")   # a.obsm["X_dica"], a.obs["domain"], a.obs["label"]
//
// Its layout follows the AnnData on-disk specification: X (cells x
// channels, float32 or float64, chunked by rows), obs (a dataframe: the
// index "_index" of cell names, "source:row" or "domain:k"; a categorical
// "domain", a categorical or numeric "label", numeric targets, then extra
// categorical or numeric columns such as a predicted population and its
// confidence), var (the channel names and extra string columns),
// obsm[KEY] (the components, float64), uns["dica"] (method, sigma, rank,
// eigenvalues, model digest, and the JSON texts layout and preprocessing,
// which ReadDicaUns reads back) and the empty groups layers, obsp, varm
// and varp. Chunks are compressed with zlib (numcodecs' Zlib, level 1 by
// default), gzip or not at all: codecs that numcodecs and the Go standard
// library share. The h5ad (HDF5) format has no pure-Go implementation;
// convert in Python: anndata.read_zarr("cells.zarr").write_h5ad("cells.h5ad").
//
// The reader takes dense X (or a layer) of any numeric type, chunked in any
// way within a bound on chunk size, compressed with zlib, gzip, bz2, zstd,
// lz4 or blosc (blosclz, lz4, snappy, zlib or zstd inside, with or without
// byte shuffle: zarr-python's default is blosc with lz4 and byte shuffle),
// and obs columns that are categorical, strings, numbers, booleans or
// nullable integers. A sparse X, a bit-shuffled blosc chunk and object
// arrays other than strings are refused with a message saying what to do.
// The Zarr format reads a chunk missing from a store as the array's fill
// value: a missing chunk of X is an error (cells nobody measured), one of
// an obs column is read so, with a warning (Source.Warnings). A pass holds
// one chunk of each array it reads, in buffers reused from chunk to chunk;
// Source.PassBytes bounds that memory, for a memory budget.
//
// The Zarr encoding is this module's own (package anndata/internal/zarr):
// among pure-Go Zarr modules, github.com/exergy-dev/zarr-go (v0.1.0) writes
// only Zarr v3, which anndata 0.8 and zarr 2.x cannot read, and the other
// Go Zarr v2 packages found read but do not write; the parts of Zarr v2
// that AnnData needs (groups, attributes, 1- and 2-dimensional arrays,
// vlen-utf8 strings) are small.
package anndata
