// Package fcs reads and writes Flow Cytometry Standard files (FCS 2.0, 3.0
// and 3.1, list mode), the format every flow and mass cytometer exports, and
// streams their events as a dataset.Source.
//
// # Format
//
// An FCS data set is a fixed 58-byte HEADER (version "FCSx.y", then the byte
// offsets of the TEXT, DATA and ANALYSIS segments as right-justified ASCII
// numbers), a TEXT segment of delimiter-separated keyword/value pairs (the
// first byte is the delimiter; a delimiter inside a keyword or value is
// escaped by doubling it), an optional supplemental TEXT, and a DATA segment
// holding $TOT events of $PAR parameters each, parameter n taking $PnB bits.
// $DATATYPE is I (unsigned integers), F (IEEE float32) or D (float64), in the
// byte order $BYTEORD (1,2,3,4 little-endian; 4,3,2,1 big-endian). Several
// data sets may be chained in one file through $NEXTDATA. As the data sets
// of a chain occupy disjoint parts of the file, ParseAll and OpenAll refuse
// a chain whose later data sets' TEXT segments, or events, add up to more
// than the file: such overlapping data sets would cost (data sets) x (file
// size) to parse or read.
//
// # Real-world files
//
// The reader follows flowCore and FlowKit where instruments deviate from the
// standard: blank or zero-padded HEADER offsets; HEADER DATA offsets that are
// blank, overlap the TEXT or point past the end of the file while $BEGINDATA /
// $ENDDATA are sound (then TEXT is trusted; otherwise the HEADER is, as in
// files whose TEXT offsets are off); $ENDDATA one byte too far; padded
// numbers; non-integer $PnR; supplemental TEXT offsets that point at
// non-TEXT bytes (ignored, see File.Warnings). Integer values are masked to
// the smallest power of two >= $PnR, minus one, as flowCore and FlowKit do.
// Values are returned as stored ("raw"): $PnE and $PnG are applied only on
// request (EventOptions.Scale).
//
// Events are read only from the DATA segment, never from the bytes after it
// (an ANALYSIS segment, the next data set of a $NEXTDATA chain). A data set
// whose DATA segment holds fewer than $TOT events, because the file is cut
// short or the segment is, is reported by a *TruncatedError holding the
// expected and present event counts; EventOptions.AllowTruncated reads the
// complete events present instead.
//
// Versions other than FCS 2.0, 3.0 and 3.1 are read as FCS 3.1, with a
// warning; so is a DATA segment holding more events than $TOT (then $TOT
// events are read).
//
// Events are decoded in blocks from a buffered chunk of the file, so a file
// never has to be in memory twice: File.Events returns an EventReader whose
// Read fills a row-major []float64.
//
// # Channel names
//
// Channels are referred to by $PnN or $PnS (File.LookupParam). Parameters
// that share a $PnN are named NAME#k, k being the parameter number, in
// every list of names (File.Names, Info, a Source of all channels), with a
// warning; a reference that matches several parameters is an error naming
// them and the NAME#k that selects each, never a guess.
//
// Source reads files as a dataset.Source, one domain per file (or per data
// set, SourceOptions.AllDataSets), raw or linearized (SourceOptions.Scale).
// It records what an output or a fitted model needs to keep: the channels
// matched (Source.Channels), the spillover applied (Source.Compensations),
// the keywords the files share (Source.Keywords) and each channel's own
// keywords (Param.Keywords), and the readers' warnings (Source.Warnings).
//
// # Writing
//
// Write, WriteFile, Writer and StreamWriter write FCS 3.1: TEXT in valid
// UTF-8 (bytes that are not are read as Latin-1), delimiters inside keywords
// and values doubled, $PnE 0,0 for float data, whose $PnR and $PnD follow
// from the values (Param.ForFloat). WriteFile replaces its destination
// atomically. Writer streams events whose number and ranges are declared
// first; StreamWriter streams events in one pass when they are known only
// at the end (it writes the TEXT last, before the events, into room it
// reserved).
package fcs
