package tdbfilter

// #include <tdbfilter.h>
import "C"

import "unsafe"

// optionValue lists the Go types whose memory layout is the C type of an option; the C API
// checks the value's size against the option's type.
type optionValue interface {
	int32 | uint32 | uint64 | float64 | float32 | uint8
}

func setOption[T optionValue](p *Pipeline, filter int, opt FilterOption, value T) error {
	i, err := index(filter)
	if err != nil {
		return err
	}
	return p.write(func(c *C.tdb_pipeline_t, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_pipeline_set_option(c, i, C.tdb_filter_option_t(opt), unsafe.Pointer(&value),
			C.size_t(unsafe.Sizeof(value)), cerr)
	})
}

func getOption[T optionValue](p *Pipeline, filter int, opt FilterOption) (T, error) {
	var value T
	i, err := index(filter)
	if err != nil {
		return value, err
	}
	err = p.read(func(c *C.tdb_pipeline_t) error {
		var cerr *C.tdb_error_t
		st := C.tdb_pipeline_option(c, i, C.tdb_filter_option_t(opt), unsafe.Pointer(&value),
			C.size_t(unsafe.Sizeof(value)), &cerr)
		return takeError(st, cerr)
	})
	return value, err
}

// SetCompressionLevel sets the level of compression filter i (GZIP, ZSTD, LZ4, RLE, BZIP2,
// DOUBLE_DELTA, DICTIONARY, DELTA); -1 is TileDB's default level.
func (p *Pipeline) SetCompressionLevel(i int, level int32) error {
	return setOption(p, i, OptionCompressionLevel, level)
}

// CompressionLevel returns the level of compression filter i.
func (p *Pipeline) CompressionLevel(i int) (int32, error) {
	return getOption[int32](p, i, OptionCompressionLevel)
}

// SetBitWidthMaxWindow sets the window, in bytes, of BIT_WIDTH_REDUCTION filter i.
func (p *Pipeline) SetBitWidthMaxWindow(i int, window uint32) error {
	return setOption(p, i, OptionBitWidthMaxWindow, window)
}

// BitWidthMaxWindow returns the window, in bytes, of BIT_WIDTH_REDUCTION filter i.
func (p *Pipeline) BitWidthMaxWindow(i int) (uint32, error) {
	return getOption[uint32](p, i, OptionBitWidthMaxWindow)
}

// SetPositiveDeltaMaxWindow sets the window, in bytes, of POSITIVE_DELTA filter i.
func (p *Pipeline) SetPositiveDeltaMaxWindow(i int, window uint32) error {
	return setOption(p, i, OptionPositiveDeltaMaxWindow, window)
}

// PositiveDeltaMaxWindow returns the window, in bytes, of POSITIVE_DELTA filter i.
func (p *Pipeline) PositiveDeltaMaxWindow(i int) (uint32, error) {
	return getOption[uint32](p, i, OptionPositiveDeltaMaxWindow)
}

// SetScaleFloatByteWidth sets the stored integer width (1, 2, 4 or 8) of SCALE_FLOAT filter i.
func (p *Pipeline) SetScaleFloatByteWidth(i int, width uint64) error {
	return setOption(p, i, OptionScaleFloatByteWidth, width)
}

// ScaleFloatByteWidth returns the stored integer width of SCALE_FLOAT filter i.
func (p *Pipeline) ScaleFloatByteWidth(i int) (uint64, error) {
	return getOption[uint64](p, i, OptionScaleFloatByteWidth)
}

// SetScaleFloatFactor sets the factor of SCALE_FLOAT filter i (stored = (value-offset)/factor).
func (p *Pipeline) SetScaleFloatFactor(i int, factor float64) error {
	return setOption(p, i, OptionScaleFloatFactor, factor)
}

// ScaleFloatFactor returns the factor of SCALE_FLOAT filter i.
func (p *Pipeline) ScaleFloatFactor(i int) (float64, error) {
	return getOption[float64](p, i, OptionScaleFloatFactor)
}

// SetScaleFloatOffset sets the offset of SCALE_FLOAT filter i.
func (p *Pipeline) SetScaleFloatOffset(i int, offset float64) error {
	return setOption(p, i, OptionScaleFloatOffset, offset)
}

// ScaleFloatOffset returns the offset of SCALE_FLOAT filter i.
func (p *Pipeline) ScaleFloatOffset(i int) (float64, error) {
	return getOption[float64](p, i, OptionScaleFloatOffset)
}

// SetWebPQuality sets the quality, 0 to 100, of WEBP filter i.
func (p *Pipeline) SetWebPQuality(i int, quality float32) error {
	return setOption(p, i, OptionWebPQuality, quality)
}

// WebPQuality returns the quality of WEBP filter i.
func (p *Pipeline) WebPQuality(i int) (float32, error) {
	return getOption[float32](p, i, OptionWebPQuality)
}

// SetWebPInputFormat sets the pixel layout WEBP filter i reads.
func (p *Pipeline) SetWebPInputFormat(i int, format WebPFormat) error {
	return setOption(p, i, OptionWebPInputFormat, uint8(format))
}

// WebPInputFormat returns the pixel layout WEBP filter i reads.
func (p *Pipeline) WebPInputFormat(i int) (WebPFormat, error) {
	v, err := getOption[uint8](p, i, OptionWebPInputFormat)
	return WebPFormat(v), err
}

// SetWebPLossless sets whether WEBP filter i compresses losslessly.
func (p *Pipeline) SetWebPLossless(i int, lossless bool) error {
	var v uint8
	if lossless {
		v = 1
	}
	return setOption(p, i, OptionWebPLossless, v)
}

// WebPLossless returns whether WEBP filter i compresses losslessly.
func (p *Pipeline) WebPLossless(i int) (bool, error) {
	v, err := getOption[uint8](p, i, OptionWebPLossless)
	return v != 0, err
}

// SetReinterpretDatatype sets the datatype DELTA or DOUBLE_DELTA filter i reads its input as
// (Any: the tile's own datatype).
func (p *Pipeline) SetReinterpretDatatype(i int, dt Datatype) error {
	if dt.Size() == 0 {
		return invalidArgument("unknown datatype %d", uint32(dt))
	}
	return setOption(p, i, OptionReinterpretDatatype, uint8(dt))
}

// ReinterpretDatatype returns the datatype DELTA or DOUBLE_DELTA filter i reads its input as.
func (p *Pipeline) ReinterpretDatatype(i int) (Datatype, error) {
	v, err := getOption[uint8](p, i, OptionReinterpretDatatype)
	return Datatype(v), err
}
