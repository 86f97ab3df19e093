package zarr

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// checkCodec returns an error for a compressor this package cannot decode.
func checkCodec(c *Codec) error {
	switch c.ID {
	case "zlib", "gzip", "bz2", "zstd", "lz4", "blosc":
		return nil
	}
	return fmt.Errorf("compressor %q is not supported (zlib, gzip, bz2, zstd, lz4 and blosc are); recompress the store, for example with zarr.copy_store into an array with compressor=numcodecs.Zlib()", c.ID)
}

// Decompress decodes a chunk compressed with c (nil: not compressed) into
// at most max bytes. want > 0 is the exact size expected (fixed-size
// types); a result of another size is an error.
func Decompress(c *Codec, src []byte, want, max int) ([]byte, error) {
	return DecompressTo(c, src, nil, want, max)
}

// DecompressTo is Decompress into the memory of dst when it is large
// enough (the result may share it); an uncompressed chunk is src itself.
func DecompressTo(c *Codec, src, dst []byte, want, max int) ([]byte, error) {
	if want > max {
		return nil, fmt.Errorf("chunk of %d bytes over the limit of %d", want, max)
	}
	var out []byte
	var err error
	if c == nil {
		out = src
	} else {
		switch c.ID {
		case "zlib":
			out, err = readAllMax(func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) }, src, dst, want, max)
		case "gzip":
			out, err = readAllMax(func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }, src, dst, want, max)
		case "bz2":
			out, err = readAllMax(func(r io.Reader) (io.Reader, error) { return bzip2.NewReader(r), nil }, src, dst, want, max)
		case "zstd":
			out, err = unzstd(src, dst, max)
		case "lz4":
			out, err = unlz4(src, dst, max)
		case "blosc":
			out, err = unblosc(src, dst, max)
		default:
			err = checkCodec(c)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.ID, err)
		}
	}
	if len(out) > max {
		return nil, fmt.Errorf("chunk decodes to more than %d bytes", max)
	}
	if want > 0 && len(out) != want {
		return nil, fmt.Errorf("chunk holds %d bytes; want %d", len(out), want)
	}
	return out, nil
}

// grow returns b with length n, reusing its memory when it is large
// enough.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// readAllMax reads the stream decoder of src to its end, keeping at most
// max bytes, in dst's memory when it is large enough. With want > 0 it
// reads want bytes, then checks that the stream ends there (a longer
// stream is an error; a shorter one gives fewer bytes).
func readAllMax(open func(io.Reader) (io.Reader, error), src, dst []byte, want, max int) ([]byte, error) {
	r, err := open(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	var out []byte
	if want > 0 {
		out = grow(dst, want)
		n, err := io.ReadFull(r, out)
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return out[:n], nil
		case err != nil:
			return nil, err
		}
		var one [1]byte
		if k, err := io.ReadFull(r, one[:]); k > 0 {
			if want == max {
				return nil, fmt.Errorf("chunk decodes to more than %d bytes", max)
			}
			return nil, fmt.Errorf("chunk holds more than %d bytes; want %d", want, want)
		} else if err != io.EOF {
			return nil, err
		}
	} else {
		buf := bytes.NewBuffer(dst[:0])
		n, err := io.Copy(buf, io.LimitReader(r, int64(max)+1))
		if err != nil {
			return nil, err
		}
		if n > int64(max) {
			return nil, fmt.Errorf("chunk decodes to more than %d bytes", max)
		}
		out = buf.Bytes()
	}
	if c, ok := r.(io.Closer); ok {
		if err := c.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// zstdDecs holds a zstd decoder for each bound of a decoded chunk (one in
// practice): a decoder refuses to decode past its bound, so that a chunk
// of a few bytes cannot claim gigabytes.
var zstdDecs sync.Map // int -> *zstd.Decoder

func zstdDecoder(max int) (*zstd.Decoder, error) {
	if d, ok := zstdDecs.Load(max); ok {
		return d.(*zstd.Decoder), nil
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max)))
	if err != nil {
		return nil, err
	}
	got, _ := zstdDecs.LoadOrStore(max, d)
	return got.(*zstd.Decoder), nil
}

func unzstd(src, dst []byte, max int) ([]byte, error) {
	d, err := zstdDecoder(max)
	if err != nil {
		return nil, err
	}
	if cap(dst) == 0 {
		dst = make([]byte, 0, min(max, 4<<20))
	}
	return d.DecodeAll(src, dst[:0])
}

// unlz4 decodes numcodecs' LZ4 codec: a 4-byte little-endian size, then an
// LZ4 block.
func unlz4(src, dst []byte, max int) ([]byte, error) {
	if len(src) < 4 {
		return nil, errors.New("truncated chunk")
	}
	n := binary.LittleEndian.Uint32(src)
	if int64(n) > int64(max) {
		return nil, fmt.Errorf("chunk claims %d bytes, over the limit of %d", n, max)
	}
	out := grow(dst, int(n))
	k, err := lz4.UncompressBlock(src[4:], out)
	if err != nil {
		return nil, err
	}
	if k != int(n) {
		return nil, fmt.Errorf("chunk holds %d bytes; its header says %d", k, n)
	}
	return out, nil
}

// Blosc (c-blosc 1.x) frame: a 16-byte header (version, codec version,
// flags, type size, then little-endian int32 uncompressed size, block size
// and compressed size), an int32 start offset per block, and the blocks,
// each made of one or (split) typesize streams, each an int32 compressed
// size and its bytes (stored raw when the size equals the stream's).
const (
	bloscShuffle    = 0x1
	bloscMemcpyed   = 0x2
	bloscBitShuffle = 0x4
	bloscDontSplit  = 0x10
)

func unblosc(src, dst []byte, max int) ([]byte, error) {
	if len(src) < 16 {
		return nil, errors.New("truncated blosc header")
	}
	flags := src[2]
	typesize := int(src[3])
	nbytes := int64(binary.LittleEndian.Uint32(src[4:]))
	blocksize := int64(binary.LittleEndian.Uint32(src[8:]))
	cbytes := int64(binary.LittleEndian.Uint32(src[12:]))
	if nbytes > int64(max) {
		return nil, fmt.Errorf("chunk claims %d bytes, over the limit of %d", nbytes, max)
	}
	if cbytes > int64(len(src)) {
		return nil, fmt.Errorf("blosc frame claims %d bytes but the chunk has %d", cbytes, len(src))
	}
	out := grow(dst, int(nbytes))
	if flags&bloscMemcpyed != 0 {
		if int64(len(src)) < 16+nbytes {
			return nil, errors.New("truncated blosc chunk")
		}
		copy(out, src[16:])
		return out, nil
	}
	if nbytes == 0 {
		return out, nil
	}
	if flags&bloscBitShuffle != 0 {
		return nil, errors.New("blosc bit shuffle is not supported (byte shuffle and no shuffle are)")
	}
	if typesize == 0 || blocksize <= 0 {
		return nil, fmt.Errorf("blosc header: type size %d, block size %d", typesize, blocksize)
	}
	// As c-blosc: whole blocks, then a leftover block of the rest (which is
	// never split), even when the header's block size exceeds the data.
	nblocks := nbytes / blocksize
	if nbytes%blocksize != 0 {
		nblocks++
	}
	if 16+4*nblocks > int64(len(src)) {
		return nil, errors.New("truncated blosc block offsets")
	}
	codec := flags >> 5
	tmp := make([]byte, min(blocksize, nbytes))
	for j := int64(0); j < nblocks; j++ {
		bsize := blocksize
		leftover := false
		if j == nblocks-1 && nbytes%blocksize != 0 {
			bsize = nbytes % blocksize
			leftover = true
		}
		start := int64(binary.LittleEndian.Uint32(src[16+4*j:]))
		if start < 16 || start > int64(len(src)) {
			return nil, fmt.Errorf("blosc block %d starts at %d, outside the chunk", j, start)
		}
		nsplits := int64(1)
		if flags&bloscDontSplit == 0 && typesize <= 16 && bsize/int64(typesize) >= 128 && !leftover {
			nsplits = int64(typesize)
		}
		shuffled := flags&bloscShuffle != 0 && typesize > 1
		dst := out[j*blocksize : j*blocksize+bsize]
		stage := dst
		if shuffled {
			stage = tmp[:bsize]
		}
		neblock := bsize / nsplits
		p := start
		for s := int64(0); s < nsplits; s++ {
			if p+4 > int64(len(src)) {
				return nil, fmt.Errorf("truncated blosc block %d", j)
			}
			cb := int64(int32(binary.LittleEndian.Uint32(src[p:])))
			p += 4
			if cb < 0 || p+cb > int64(len(src)) {
				return nil, fmt.Errorf("blosc block %d: stream of %d bytes outside the chunk", j, cb)
			}
			in, part := src[p:p+cb], stage[s*neblock:(s+1)*neblock]
			p += cb
			if cb == neblock {
				copy(part, in)
				continue
			}
			if err := bloscStream(codec, in, part, max); err != nil {
				return nil, fmt.Errorf("blosc block %d: %w", j, err)
			}
		}
		if shuffled {
			unshuffle(typesize, stage, dst)
		}
	}
	return out, nil
}

// bloscStream decodes one compressed stream into exactly len(dst) bytes.
func bloscStream(codec byte, in, dst []byte, max int) error {
	var n int
	var err error
	switch codec {
	case 0:
		n, err = blosclz(in, dst)
	case 1:
		n, err = lz4.UncompressBlock(in, dst)
	case 2:
		var k int
		if k, err = snappy.DecodedLen(in); err == nil {
			if k != len(dst) {
				return fmt.Errorf("snappy stream of %d bytes; want %d", k, len(dst))
			}
			var b []byte
			b, err = snappy.Decode(dst, in)
			n = len(b)
		}
	case 3:
		var b []byte
		b, err = readAllMax(func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) }, in, dst, len(dst), len(dst))
		n = len(b)
	case 4:
		var d *zstd.Decoder
		if d, err = zstdDecoder(max); err != nil {
			return err
		}
		var b []byte
		b, err = d.DecodeAll(in, dst[:0])
		if err == nil && len(b) > len(dst) {
			return fmt.Errorf("zstd stream over %d bytes", len(dst))
		}
		n = len(b)
	default:
		return fmt.Errorf("blosc codec %d is not supported", codec)
	}
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("stream decodes to %d bytes; want %d", n, len(dst))
	}
	return nil
}

// blosclz decodes blosc's FastLZ variant into dst, returning the number of
// bytes written.
func blosclz(in, dst []byte) (int, error) {
	const maxDistance = 8191
	if len(in) == 0 {
		return 0, nil
	}
	ip, op := 0, 0
	bad := errors.New("corrupt blosclz stream")
	ctrl := int(in[ip] & 31)
	ip++
	for {
		if ctrl >= 32 {
			n := ctrl>>5 - 1
			ofs := (ctrl & 31) << 8
			if n == 6 {
				for {
					if ip >= len(in) {
						return 0, bad
					}
					c := int(in[ip])
					ip++
					n += c
					if c != 255 {
						break
					}
				}
			}
			if ip >= len(in) {
				return 0, bad
			}
			code := int(in[ip])
			ip++
			dist := ofs + code
			if code == 255 && ofs == 31<<8 {
				if ip+1 >= len(in) {
					return 0, bad
				}
				dist = int(in[ip])<<8 + int(in[ip+1]) + maxDistance
				ip += 2
			}
			n += 3
			from := op - dist - 1
			if from < 0 || op+n > len(dst) {
				return 0, bad
			}
			for k := 0; k < n; k++ { // overlapping copy, byte by byte
				dst[op+k] = dst[from+k]
			}
			op += n
		} else {
			n := ctrl + 1
			if op+n > len(dst) || ip+n > len(in) {
				return 0, bad
			}
			copy(dst[op:], in[ip:ip+n])
			op += n
			ip += n
		}
		if ip >= len(in) {
			return op, nil
		}
		ctrl = int(in[ip])
		ip++
	}
}

// unshuffle undoes blosc's byte shuffle of a block: the block holds the
// first bytes of every element, then the second bytes, and so on; bytes
// past the last whole element are stored as they are.
func unshuffle(typesize int, src, dst []byte) {
	n := len(src) / typesize
	for j := 0; j < typesize; j++ {
		s := src[j*n : (j+1)*n]
		for i, b := range s {
			dst[i*typesize+j] = b
		}
	}
	copy(dst[n*typesize:], src[n*typesize:])
}

// Compress encodes a chunk with the writer's compressor (nil: none).
func Compress(c *Codec, src []byte, buf *bytes.Buffer) ([]byte, error) {
	if c == nil {
		return src, nil
	}
	buf.Reset()
	level := -1
	if c.Level != nil {
		level = *c.Level
	}
	var w io.WriteCloser
	var err error
	switch c.ID {
	case "zlib":
		w, err = zlib.NewWriterLevel(buf, level)
	case "gzip":
		w, err = gzip.NewWriterLevel(buf, level)
	default:
		return nil, fmt.Errorf("zarr: cannot write compressor %q", c.ID)
	}
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(src); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
