//! WEBP (18): a 2-D UINT8 tile encoded as a WebP image with libwebp's simple API
//! (docs/FORMAT.md §5.19).
//!
//! The tile is an image of `y_extent` rows of `x_extent` bytes; a pixel has 3 (RGB, BGR) or 4
//! (RGBA, BGRA) bytes, so the image is `x_extent / depth` pixels wide with a row stride of
//! `x_extent`. Own metadata: `u32 num_parts`, then `u32 encoded_length` per data part,
//! followed by the forwarded input metadata. Data: per part, a complete RIFF/WEBP file from
//! `WebPEncodeLossless{RGB,BGR,RGBA,BGRA}` or `WebPEncode{…}(quality)`.
//!
//! Reverse decodes in the same colour order (`WebPDecode{RGB,BGR,RGBA,BGRA}`, here the `…Into`
//! variants, which give the same pixels) and keeps the first `original_length` bytes of the
//! decoded pixels, as TileDB does.
//!
//! "Lossless" is libwebp's simple lossless API, which does not set `exact`: the colour bytes
//! of fully transparent pixels (alpha 0) may change; TileDB 2.30 reads such tiles back changed
//! too. The bundled libwebp (1.5.0) produced byte-identical tiles to TileDB 2.30's wheel for
//! every captured lossless and lossy tile (see the tests).
//!
//! Policies:
//! * WEBP only works as the first filter: TileDB's reverse writes the decoded pixels into the
//!   final tile window and produces nothing when another filter precedes it. Forward refuses
//!   input that carries metadata of an earlier filter; reverse refuses to run anywhere but as
//!   the first filter.
//! * The filter data type must be UINT8; the input format must be RGB, BGR, RGBA or BGRA; the
//!   extents must be non-zero, `x_extent` divisible by the pixel depth, and the image at most
//!   16383 × 16383 pixels; lossy quality must be within 0..=100.
//! * A part longer than the image is refused (TileDB would drop the excess). A part shorter
//!   than the image (never produced by a dense writer) is padded with zeros before encoding:
//!   TileDB reads back the first `original_length` decoded bytes, so that tile is readable,
//!   while TileDB itself would read past its buffer.
//! * More than one data part is refused (TileDB cannot read several parts back).
//! * On read, the image must decode to at least `original_length` bytes and to no more than
//!   the tile's image; anything else is corrupt data.

use crate::engine::stage::{DataFlow, DataSink, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::filters::config::WebpOptions;
use crate::filters::registry::{FilterDescriptor, OptionsLayout, wrong_filter};
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::format::filter_type::FilterType;

/// The largest image side libwebp accepts, in pixels.
const MAX_SIDE: usize = 16383;

/// The pixel layouts of TileDB's `WebpInputFormat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Rgb,
    Bgr,
    Rgba,
    Bgra,
}

impl Format {
    fn from_option(v: u8) -> Result<Format> {
        match v {
            1 => Ok(Format::Rgb),
            2 => Ok(Format::Bgr),
            3 => Ok(Format::Rgba),
            4 => Ok(Format::Bgra),
            0 => Err(Error::invalid(
                "WEBP: the input format option (WEBP_INPUT_FORMAT) must be set",
            )),
            v => Err(Error::invalid(format!(
                "WEBP: input format {v} is invalid (expected 1..=4)"
            ))),
        }
    }

    fn depth(self) -> usize {
        match self {
            Format::Rgb | Format::Bgr => 3,
            Format::Rgba | Format::Bgra => 4,
        }
    }
}

fn check_uint8(ctx: &StageCtx<'_>) -> Result<()> {
    if ctx.datatype != Datatype::Uint8 {
        return Err(Error::invalid(format!(
            "WEBP: datatype {} is not supported (only UINT8)",
            ctx.datatype.name()
        )));
    }
    Ok(())
}

/// The image geometry `(width in pixels, height, stride in bytes)` given by the options.
fn geometry(o: &WebpOptions, f: Format) -> Result<(usize, usize, usize)> {
    let (x, y, depth) = (o.x_extent as usize, o.y_extent as usize, f.depth());
    if x == 0 || y == 0 {
        return Err(Error::invalid(format!(
            "WEBP: tile extents must be non-zero (y_extent {y}, x_extent {x})"
        )));
    }
    if x % depth != 0 {
        return Err(Error::invalid(format!(
            "WEBP: x_extent {x} is not divisible by the pixel depth {depth}"
        )));
    }
    if y > MAX_SIDE || x / depth > MAX_SIDE {
        return Err(Error::invalid(format!(
            "WEBP: a {}x{y} image exceeds WebP's maximum of {MAX_SIDE}x{MAX_SIDE} pixels",
            x / depth
        )));
    }
    Ok((x / depth, y, x))
}

/// Encodes one image of exactly `width * height * depth` bytes.
fn encode(
    o: &WebpOptions,
    f: Format,
    img: &[u8],
    w: usize,
    h: usize,
    stride: usize,
) -> Result<Vec<u8>> {
    let (w, h, s) = (w as u32, h as u32, stride as u32);
    let q = o.quality;
    let encoded = match (f, o.lossless) {
        (Format::Rgb, true) => libwebp::WebPEncodeLosslessRGB(img, w, h, s),
        (Format::Bgr, true) => libwebp::WebPEncodeLosslessBGR(img, w, h, s),
        (Format::Rgba, true) => libwebp::WebPEncodeLosslessRGBA(img, w, h, s),
        (Format::Bgra, true) => libwebp::WebPEncodeLosslessBGRA(img, w, h, s),
        (Format::Rgb, false) => libwebp::WebPEncodeRGB(img, w, h, s, q),
        (Format::Bgr, false) => libwebp::WebPEncodeBGR(img, w, h, s, q),
        (Format::Rgba, false) => libwebp::WebPEncodeRGBA(img, w, h, s, q),
        (Format::Bgra, false) => libwebp::WebPEncodeBGRA(img, w, h, s, q),
    };
    match encoded {
        Ok(b) if !b.is_empty() => Ok(b.to_vec()),
        _ => Err(Error::invalid("WEBP: error encoding image data")),
    }
}

/// Forward: own block of encoded lengths; one encoded image per data part.
pub fn forward(
    o: &WebpOptions,
    ctx: &mut StageCtx<'_>,
    input: FwdIn<'_>,
    out: FwdOut<'_>,
) -> Result<DataFlow> {
    check_uint8(ctx)?;
    let f = Format::from_option(o.input_format)?;
    let (w, h, stride) = geometry(o, f)?;
    if !o.lossless && !(0.0..=100.0).contains(&o.quality) {
        return Err(Error::invalid(format!(
            "WEBP: quality {} is outside 0..=100",
            o.quality
        )));
    }
    if input.md.total_len() != 0 {
        return Err(Error::invalid(
            "WEBP must be the first filter of a pipeline: TileDB cannot read it back otherwise",
        ));
    }
    if input.data.count() > 1 {
        return Err(Error::invalid(format!(
            "WEBP: {} data parts cannot be encoded in a form TileDB reads back",
            input.data.count()
        )));
    }
    let image_len = h * stride;
    let mut encoded = Vec::with_capacity(input.data.count());
    for part in input.data.iter() {
        if part.len() > image_len {
            return Err(Error::invalid(format!(
                "WEBP: tile of {} bytes is larger than the {w}x{h}-pixel image of {image_len} \
                 bytes given by the tile extents",
                part.len()
            )));
        }
        let e = if part.len() == image_len {
            encode(o, f, part, w, h, stride)?
        } else {
            let mut padded = vec![0u8; image_len];
            padded[..part.len()].copy_from_slice(part);
            encode(o, f, &padded, w, h, stride)?
        };
        let len = u32::try_from(e.len())
            .map_err(|_| Error::invalid("WEBP: encoded image exceeds 4 GiB"))?;
        encoded.push((len, e));
    }
    let own = out.md.push_uninit(4 + 4 * encoded.len());
    own[..4].copy_from_slice(&(encoded.len() as u32).to_le_bytes());
    for (k, (len, _)) in encoded.iter().enumerate() {
        own[4 + 4 * k..8 + 4 * k].copy_from_slice(&len.to_le_bytes());
    }
    out.md.extend_forwarded(input.md);
    for (_, e) in &encoded {
        out.data.push(e);
    }
    Ok(DataFlow::Written)
}

/// Decodes `data` (a whole image of `needed` bytes, `width * depth` per row) into `dst`
/// (exactly `needed` bytes).
fn decode_into(f: Format, data: &[u8], dst: &mut [u8], row: u32) -> Result<()> {
    let r = match f {
        Format::Rgb => libwebp::WebPDecodeRGBInto(data, dst, row),
        Format::Bgr => libwebp::WebPDecodeBGRInto(data, dst, row),
        Format::Rgba => libwebp::WebPDecodeRGBAInto(data, dst, row),
        Format::Bgra => libwebp::WebPDecodeBGRAInto(data, dst, row),
    };
    r.map_err(|_| Error::corrupt("WEBP: error decoding image data"))
}

/// Reverse: decodes the recorded image and writes the tile's bytes.
pub fn reverse(
    o: &WebpOptions,
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    mut out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    check_uint8(ctx)?;
    let f = Format::from_option(o.input_format)?;
    if !matches!(out.data, DataSink::Window(_)) {
        return Err(Error::invalid(
            "WEBP must be the first filter of a pipeline: TileDB reads nothing back otherwise",
        ));
    }
    let window = out.data.limit();
    let mut r = ByteReader::new(input.md, "WEBP metadata");
    let count = r.u32()?;
    if count > 1 {
        return Err(Error::corrupt(format!(
            "WEBP: {count} images recorded; TileDB reads back at most one"
        )));
    }
    if count == 0 {
        out.data.alloc(0)?;
        return Ok((MdFlow::Rest(r.position()), DataFlow::Written));
    }
    let enc_len = r.u32()? as usize;
    let data = input.data.get(..enc_len).ok_or_else(|| {
        Error::corrupt(format!(
            "WEBP: image of {enc_len} bytes recorded but only {} bytes of data",
            input.data.len()
        ))
    })?;
    let (w, h) = libwebp::WebPGetInfo(data)
        .map_err(|_| Error::corrupt("WEBP: error decoding image data (bad header)"))?;
    let row = w as usize * f.depth();
    let needed = row * h as usize;
    let image_bound = o.y_extent as usize * o.x_extent as usize;
    if needed < window {
        return Err(Error::corrupt(format!(
            "WEBP: a {w}x{h} image decodes to {needed} bytes, fewer than the chunk's {window}"
        )));
    }
    if needed > window.max(image_bound) {
        return Err(Error::corrupt(format!(
            "WEBP: a {w}x{h} image ({needed} bytes) is larger than the tile's {} bytes",
            window.max(image_bound)
        )));
    }
    let mut dst = out.data.alloc(window)?;
    if needed == window {
        // libwebp's decoder takes `&mut [u8]`: the window is initialised first (an extra
        // pass, small next to WebP decoding).
        dst.init_with(window, |buf| decode_into(f, data, buf, row as u32))?;
    } else {
        let mut full = vec![0u8; needed];
        decode_into(f, data, &mut full, row as u32)?;
        dst.put(&full[..window]);
    }
    Ok((MdFlow::Rest(r.position()), DataFlow::Written))
}

/// The Webp filter's descriptor (see [`crate::filters::registry`]).
pub const DESCRIPTOR: FilterDescriptor = FilterDescriptor {
    filter_type: FilterType::Webp,
    default: Filter::Webp(WebpOptions {
        quality: 100.0,
        input_format: 0,
        lossless: false,
        y_extent: 0,
        x_extent: 0,
    }),
    positional: None,
    layout: OptionsLayout::Webp,
    forward: |f, ctx, input, out| match f {
        Filter::Webp(o) => forward(o, ctx, input, out),
        other => Err(wrong_filter(FilterType::Webp, other)),
    },
    reverse: |f, ctx, input, out| match f {
        Filter::Webp(o) => reverse(o, ctx, input, out),
        other => Err(wrong_filter(FilterType::Webp, other)),
    },
    fixed_growth: |n| n.saturating_add(n / 4),
    unbounded_on_strings: false,
    reverse_max_ratio: u64::MAX,
    encodes_empty_part: true,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::parts::Parts;
    use crate::filters::config::Filter;
    use crate::filters::testing::{forward_one, forward_parts, reverse_one};
    use sha2::{Digest, Sha256};

    use crate::filters::testing::{ErrOnly, to_hex as hex, unhex};

    fn webp(format: u8, lossless: bool, quality: f32, y: u16, x: u16) -> Filter {
        Filter::Webp(WebpOptions {
            quality,
            input_format: format,
            lossless,
            y_extent: y,
            x_extent: x,
        })
    }

    /// The test image the TileDB vectors were written from (a gradient with a block pattern,
    /// alpha between 200 and 255 for 4-byte pixels).
    fn image(rows: usize, xbytes: usize, depth: usize, seed: usize) -> Vec<u8> {
        let mut img = Vec::with_capacity(rows * xbytes);
        for y in 0..rows {
            for x in 0..xbytes {
                let (px, ch) = (x / depth, x % depth);
                let mut v = ((px * 7 + y * 5 + ch * 60 + seed) % 256) as u8;
                if (y / 4 + px / 4) % 3 == 0 {
                    v ^= 0x55;
                }
                if depth == 4 && ch == 3 {
                    v = (200 + (px + y) % 56) as u8;
                }
                img.push(v);
            }
        }
        img
    }

    fn run_reverse(f: &Filter, md: &[u8], data: &[u8], len: usize) -> Result<Vec<u8>> {
        reverse_one(f, Datatype::Uint8, 1, md, data, len, false).map(|r| r.data)
    }

    /// A tile TileDB 2.30 wrote: the options, the test image it was written from, the chunk's
    /// metadata and data, and the SHA-256 of the cells TileDB itself read back.
    struct TiledbTile {
        name: &'static str,
        format: u8,
        lossless: bool,
        quality: f32,
        rows: usize,
        xbytes: usize,
        seed: usize,
        md: &'static str,
        data: &'static str,
        readback_sha256: &'static str,
        lossless_readback: bool,
    }

    impl TiledbTile {
        fn filter(&self) -> Filter {
            webp(
                self.format,
                self.lossless,
                self.quality,
                self.rows as u16,
                self.xbytes as u16,
            )
        }

        fn image(&self) -> Vec<u8> {
            let depth = if self.format < 3 { 3 } else { 4 };
            image(self.rows, self.xbytes, depth, self.seed)
        }
    }

    // Tiles of `a0.tdb` written by libtiledb 2.30.0 (TileDB-Py 0.36.1): a dense 2-D UINT8 array
    // of exactly one tile (`rows` × `xbytes`), pipeline [WEBP(quality, format, lossless)].
    // Chunking is disabled, so each tile is one chunk: u64 1, u32 rows·xbytes, u32 data length,
    // u32 8, then `md` and `data` below.
    const TILEDB_TILES: &[TiledbTile] = &[
        TiledbTile {
            name: "rgb_lossless",
            format: 1,
            lossless: true,
            quality: 100.0,
            rows: 32,
            xbytes: 96,
            seed: 0,
            md: "0100000060020000",
            data: "\
            5249464658020000574542505650384c4c0200002f1fc00700cd7521a2ffb18b88fe87076eb4ffeb932a6e53\
            e0ee3a46aa1c0b30993b5439a6c851a5c76d80787ebfef373642ee7eac900e8f6055ba6f4be7eeeecebf423a\
            27b16dd7ce9670240416464a606161251c094742616061a43c0957403f578293dadac3e649f824fcb0305202\
            0b0b27e193f04b280c1c8c8809081cfc25fc128281dbb68decdb23695dbda2f6f36b5953c5ea238cf9288077\
            b55f875a3548297a6ce2dd9bd4750f1132ca9824a2a635552c5bcba59601b04dfd99751d15218035dd03c49b\
            eb88357069cb8aa14114cad09d4229881b28572ba9da34add99d8b75d992d22828db944be3e5096a4432749f\
            de09af0a9344c464b21dad27d9c07a37f183e87c67ce750ef82c04e69ba7680625803fa6581624704f48d2a6\
            4d036afde5290a77a4a26bea46552015b7a43a1e81dae4bf43fba06f60b5c13c3b93d1b08c284eb231f059c8\
            364c36ed839d0be48b4dae0d812cdad6e4f2be5351ff50ded23b4210c862718eeb32fd9f51201555c45d1cc9\
            c275f4a52accb6e3a8e1c18bf965304fcb33c7a478a4385f226267936f8706cba2d226db5142d3bd85ac55fc\
            7f5d808f6c1a208b3519cb0300d4f4ffaac42a802c5ef88ac94fa462f83582ace3f44be2cf2bb30dfeb02401\
            67ecfce798ca285816e5b6402d45de1e04f8e87f15cb02e3ecf34300e75de735f2e65b3b5e28b18a49d50657\
            e12d01fb6caff4eb651fcf8209639f42c0bec0d9273fd857b076a30d3c3f9300f11adb2ff6a5c539551108fb\
            42ec7f1dec00916ff6f98a903305f8c97e612e220a847dde7eb28fda3ff67d8afc665f00",
            readback_sha256: "51c39b4b7f651333a76761638b44bef807791e5c9acee7611c2ac47883b7bece",
            lossless_readback: true,
        },
        TiledbTile {
            name: "bgr_lossless",
            format: 2,
            lossless: true,
            quality: 100.0,
            rows: 32,
            xbytes: 96,
            seed: 11,
            md: "0100000070020000",
            data: "\
            5249464668020000574542505650384c5c0200002f1fc00700cd7521a2ffb18b88fe870696b36daa93abc9c9\
            e0b00777b86aba92a6fbc3dd65154df780db022a13e6cc3f67ba8336ff1d0ea7c57fdcdd1de22400db408a84\
            48281c3c29070f0e9e8448a88487850f2be2050c3eac84487012d9b6d81c0957c283815f48d216160646c295\
            f0240406167e291f163e094f423872db3690e4dbecae91f1ea1579bf9da386111ce1d7d7026abc72f1c082f1\
            20f826a909e6358e60781a710ec94464a126a96c77fec00048e110ba940c5908328ac874b7df1f56a0cc251f\
            421ce212e43779790f4977d76f22ada48db01e8b519f90fbe1e03ac409119ca156f2d2c62713918de7e3eb23\
            1e7464927a442033398ce078fcfa2b37e8620d218e67864210b945f3fde959894e794c7cbe402eaf3f440b1d\
            a93c2b3e1a442cc8d9c783ab67f9850d9b1ddf04efd991bfc4fe855f06371c5cd76e7861b3352f387e11a410\
            f5f9f28904b6f8102d658b90c511a567f140b3f7d6bce044908f07f745d9fbc80a426c88603f3e691a8f59b1\
            35effb9b177f7c086482f7ecc8e4887c54d2ab9ba86b25a95b346e6a56129155ec082bc401bf6121e6aaff10\
            4456875a28b37391e9de84949eb5bb7386e037b25a699ca5d2dd8583a6f179ffc2858dd9ee5b5e285b04de04\
            bf08e475c11009af0c6ef03de681ba056a338a7037598020bb3b671fe8984f29a584c016c70f8e088edfe425\
            6c98a5a494a8e551755f79e29137e32fcfe0867fe93e22a2c67d8ad57d32703fd4d2bb4f66ee57e5f6203d33\
            777f4826aac7e9be7caa5792a1fb9f524ab5c1d47dc196521abbff69e3d10d7ee1970ddc1f90f57f3c19b8ef\
            1032715f9b98dc47",
            readback_sha256: "4a9feb0ebee7d7ef4c9435e5db7fe7fe6a2049b6ceaeece8485cb48da0babace",
            lossless_readback: true,
        },
        TiledbTile {
            name: "rgba_lossless",
            format: 3,
            lossless: true,
            quality: 100.0,
            rows: 16,
            xbytes: 64,
            seed: 3,
            md: "0100000030010000",
            data: "\
            5249464628010000574542505650384c1c0100002f0fc00310cd7521a2ffb18b88fe87c64db56dcb32fd6e29\
            705b3924f90f1128c6616324c65f02b7006eef1f02b777c5dd5dbe9585356cbb7636c241084290ee67118210\
            84620521007d1c042601d88689844888844a1abc844a9884c3c2c38bb880c1c34888844d9e00dff30d1ca016\
            e201de6a0c50df53370e33601ce23f2039e288e0a00090c172492595c3258a1414a524e86159b88c4ba69c82\
            0bb0cd01b9e6a090ffd17d3744ac51ab8d29cc8205fb818804fc1f773915a2bbcf05d8e698e9531c068c4172\
            2648ad1fc708234dad3744448061e44c25c583e8deec1b5f7d59d1c584e554a050b5000bc588235a5f101109\
            21dab5eda9808e9f25a717b7d0276034a061c128e43c4b8a56d0c584e55466ab6df301959236b309",
            readback_sha256: "8d2908bd5a29cfe43a2e61bdf31f626e520373b7ccaf0265d9dd73ea6c8a67b2",
            lossless_readback: true,
        },
        TiledbTile {
            name: "bgra_lossless",
            format: 4,
            lossless: true,
            quality: 100.0,
            rows: 16,
            xbytes: 64,
            seed: 9,
            md: "010000001c010000",
            data: "\
            5249464614010000574542505650384c070100002f0fc00310cd7521a2ffb18b88fe87c5516d5bcb32fa5d4b\
            fc3873163118fd31bf28947049f0bbdcd70177776712806d9848888448a8bc49a884c1c1c189b880c2c34888\
            048490ade8217c84103ec8018510cea18410c247d864b5691b30ca5a0e31bf57c2195024a3d64300d2a9ae96\
            37bc92a19168081b87c6019080e6940c7b14871144f6791c549c2509b74d0b454be40d4e4082305939fcecd5\
            66b359a2b2dbc6a3e571588fd96c868dd5fea1249e64ce634e6809b4ac113d3a11f4ef085e44426177cca852\
            c0d86f8ab3e8da7a6719539a6038b4a084c341f6dfa4038fd141a9f78005ebb129cf9284e0c97cad25b0115f\
            4fcec773d640f1f57afc0d684e09cae29c8f6700",
            readback_sha256: "472d5d0cad8a022f51f8924d0509fd7828f8e30c285f4b60b6a3534045523800",
            lossless_readback: true,
        },
        TiledbTile {
            name: "rgb_lossy80",
            format: 1,
            lossless: false,
            quality: 80.0,
            rows: 32,
            xbytes: 96,
            seed: 0,
            md: "0100000066020000",
            data: "\
            524946465e020000574542505650382052020000100e009d012a200020003e5d248d45a3a2211bf4003805c4\
            b6004e99423ccfc6bf15790334cbb679207cacb061d203cc06e807f7af428ff19ec01e801e531fb75f01bfb2\
            fff23fdc7b41ffffc104db8e2536433d90801ed1f500e8b9e801fa56ccf535005362d1b4ab2e21c5914ee2e5\
            fd41ecb75d17758e0000fefe72d08994ea9865ad7e7ba8ab9e0fd88d499c721c739c4492ee6c34db7459c188\
            328ea79eba8d72fd5465d9d974467cac6b9808a40cca6a3c528977a9e5a12aecc63f1fffdb3b332e77c037a5\
            f43e30cc34b38f5db8687638d228d5dff897e5a79a62d4adef3fff228ae9f914df2db0c10dabb39a6022c15c\
            ba75de13066c37f97065d663cec32ccc5e22b1fe25a62e6678d7b3925c8767f91abdda8c13b86b792091cb2f\
            e856c6647b936296dfb42b59a2bc77b09c596fcc3fb7b47f3e242a64e9376b00258c12b7d253cc818ad3b862\
            3b9a268294e30f8ff5e52e67bde72f7faffdf69ee6298a89e69f828677b7d82b96081be7e2dd348e44802a06\
            258523a39e5135099ff68c0cb5c762ac2ecc27b6e5b5d34e72a22e37d18ff08967d72bb9b4b62a8efe713800\
            96bf4baf3f90135e588c47de779f1f4d3719d027087691d02bbceac455e13e1b6f9e5e4fc6a3390b44d12dfb\
            2a777264d381d1a6798309ad412bb4062f8639e40e0987ae8a901f77baa9422b8a70677ea96bd8a9c68bf313\
            db0fcb6c1d13393418df60477a0483e1edd7d6af029b232e516d721bd2bb3e6f9ef84570af04dd35af6bbe4f\
            7788e5fc232381eb5219b0f14b8f721131eb6e676c78845629c61fc078ff8c83b44bbc41c6304ea00000",
            readback_sha256: "5db7223c95c21ca2bc7f2bed41d5fd2304962d0286fa2e350f88b93e30db8564",
            lossless_readback: false,
        },
        TiledbTile {
            name: "rgba_lossy50",
            format: 3,
            lossless: false,
            quality: 50.0,
            rows: 16,
            xbytes: 64,
            seed: 5,
            md: "01000000ba000000",
            data: "\
            52494646b200000057454250565038580a000000100000000f00000f0000414c50481300000001b98ce87f40\
            4c9ab0fec56ce71b310159ee01005650382078000000f002009d012a1000100002c04c25b002743df334af7f\
            603e0c0113296612fc0000fef180a79aee9141e996ab1bf7d49accbdfe7af4489287a39db3b24645d5dc700a\
            158420bbfd5250de1f9d8375e486cc72fed2aea083fe218f514ca262a33d42a411f50afff05d1a49adff82e7\
            864e1ddc4a53093c0000",
            readback_sha256: "b7e8d1593f6c2224c2aa704641eaf1fe43971014502b326db70769b184dd13ee",
            lossless_readback: false,
        },
    ];

    #[test]
    fn decodes_tiledb_tiles_as_tiledb_reads_them() {
        for t in TILEDB_TILES {
            let len = t.rows * t.xbytes;
            let got = run_reverse(&t.filter(), &unhex(t.md), &unhex(t.data), len).unwrap();
            assert_eq!(
                hex(&Sha256::digest(&got)),
                t.readback_sha256,
                "{}: our decode differs from TileDB's",
                t.name
            );
            assert_eq!(got == t.image(), t.lossless_readback, "{}", t.name);
            assert_eq!(t.lossless, t.lossless_readback, "{}", t.name);
        }
    }

    #[test]
    fn encodes_tiledb_tiles_byte_identically() {
        // Our bundled libwebp (1.5.0) produces exactly the bytes TileDB 2.30's wheel wrote, for
        // lossless and lossy images alike.
        for t in TILEDB_TILES {
            let out = forward_one(&t.filter(), Datatype::Uint8, 1, None, &t.image()).unwrap();
            assert_eq!(hex(&out.md), t.md, "{}", t.name);
            assert_eq!(out.data_lens, vec![out.data.len()]);
            assert_eq!(hex(&out.data), t.data.replace(' ', ""), "{}", t.name);
        }
    }

    #[test]
    fn lossless_round_trip_is_exact_for_every_format() {
        for (format, depth) in [(1u8, 3usize), (2, 3), (3, 4), (4, 4)] {
            for (rows, px) in [(1usize, 1usize), (7, 5), (32, 32), (3, 200)] {
                let xbytes = px * depth;
                let img: Vec<u8> = (0..rows * xbytes)
                    .map(|i| (i as u32).wrapping_mul(2654435761).rotate_left(9) as u8)
                    .collect();
                let f = webp(format, true, 100.0, rows as u16, xbytes as u16);
                let out = forward_one(&f, Datatype::Uint8, 1, None, &img).unwrap();
                assert_eq!(out.flow, DataFlow::Written);
                assert_eq!(&out.data[..4], b"RIFF");
                assert_eq!(&out.data[8..16], b"WEBPVP8L");
                assert_eq!(out.md.len(), 8);
                assert_eq!(&out.md[..4], &1u32.to_le_bytes());
                assert_eq!(&out.md[4..], &(out.data.len() as u32).to_le_bytes());
                let back = run_reverse(&f, &out.md, &out.data, img.len()).unwrap();
                // libwebp's simple lossless API does not set `exact`: the colour of fully
                // transparent pixels may change (TileDB behaves the same). Everything else,
                // including every alpha value, is preserved.
                assert_eq!(back.len(), img.len());
                for (i, (b, o)) in back.chunks(depth).zip(img.chunks(depth)).enumerate() {
                    if depth == 4 && o[3] == 0 {
                        assert_eq!(b[3], 0, "format {format} {rows}x{px} pixel {i}");
                    } else {
                        assert_eq!(b, o, "format {format} {rows}x{px} pixel {i}");
                    }
                }
                if depth == 4 {
                    let opaque: Vec<u8> = img
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| if i % 4 == 3 { v | 1 } else { v })
                        .collect();
                    let out = forward_one(&f, Datatype::Uint8, 1, None, &opaque).unwrap();
                    let back = run_reverse(&f, &out.md, &out.data, img.len()).unwrap();
                    assert!(
                        back == opaque,
                        "format {format} {rows}x{px} with no transparency"
                    );
                }
            }
        }
    }

    #[test]
    fn lossy_round_trip_is_close() {
        for (format, depth) in [(1u8, 3usize), (2, 3), (3, 4), (4, 4)] {
            let (rows, xbytes) = (32usize, 48 * depth);
            let img = image(rows, xbytes, depth, 7);
            for quality in [50.0f32, 90.0, 100.0] {
                let f = webp(format, false, quality, rows as u16, xbytes as u16);
                let out = forward_one(&f, Datatype::Uint8, 1, None, &img).unwrap();
                assert_eq!(&out.data[8..15], b"WEBPVP8");
                let back = run_reverse(&f, &out.md, &out.data, img.len()).unwrap();
                assert_eq!(back.len(), img.len());
                let mean_err = back
                    .iter()
                    .zip(&img)
                    .map(|(&a, &b)| (a as i32 - b as i32).unsigned_abs() as f64)
                    .sum::<f64>()
                    / img.len() as f64;
                assert!(mean_err < 20.0, "format {format} q {quality}: {mean_err}");
            }
        }
    }

    #[test]
    fn short_part_is_padded_and_reads_back() {
        let f = webp(1, true, 100.0, 4, 12);
        let data: Vec<u8> = (0..40u8).collect();
        let out = forward_one(&f, Datatype::Uint8, 1, None, &data).unwrap();
        assert_eq!(run_reverse(&f, &out.md, &out.data, 40).unwrap(), data);
        // An empty chunk, too.
        let out = forward_one(&f, Datatype::Uint8, 1, None, &[]).unwrap();
        assert_eq!(
            run_reverse(&f, &out.md, &out.data, 0).unwrap(),
            Vec::<u8>::new()
        );
    }

    #[test]
    fn invalid_options_and_inputs_are_refused() {
        let img = vec![0u8; 4 * 12];
        let fwd = |f: Filter, t: Datatype, data: &[u8]| forward_one(&f, t, 1, None, data);
        let cases = [
            (webp(0, true, 100.0, 4, 12), "must be set"),
            (webp(5, true, 100.0, 4, 12), "invalid"),
            (webp(1, true, 100.0, 0, 12), "non-zero"),
            (webp(1, true, 100.0, 4, 0), "non-zero"),
            (
                webp(1, true, 100.0, 4, 13),
                "not divisible by the pixel depth 3",
            ),
            (webp(3, true, 100.0, 4, 12), ""),
            (
                webp(3, true, 100.0, 4, 14),
                "not divisible by the pixel depth 4",
            ),
            (webp(1, false, 100.5, 4, 12), "quality"),
            (webp(1, false, f32::NAN, 4, 12), "quality"),
            (webp(1, false, -1.0, 4, 12), "quality"),
            (webp(1, true, 100.0, 16384, 3), "maximum"),
            (webp(1, true, 100.0, 1, 16384 * 3), "maximum"),
            (webp(1, true, 100.0, 2, 12), "larger than"),
        ];
        for (f, why) in cases {
            let r = fwd(f, Datatype::Uint8, &img);
            if why.is_empty() {
                assert!(r.is_ok(), "{f:?}");
                continue;
            }
            let e = r.err().unwrap_or_else(|| panic!("{f:?} accepted"));
            assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
            assert!(e.message().contains(why), "{f:?}: {e}");
        }
        // Lossless ignores the quality, as TileDB does.
        assert!(fwd(webp(1, true, 1000.0, 4, 12), Datatype::Uint8, &img).is_ok());
        for t in [Datatype::Int8, Datatype::Char, Datatype::Uint16] {
            let e = fwd(webp(1, true, 100.0, 4, 12), t, &img).err_only();
            assert!(e.message().contains("only UINT8"), "{e}");
        }
        // Not the first filter (metadata of an earlier filter), or several data parts.
        let f = webp(1, true, 100.0, 4, 12);
        let md = [1u8, 0, 0, 0];
        let md_lens = [4usize];
        let lens = [img.len()];
        let e = forward_parts(
            &f,
            Datatype::Uint8,
            1,
            None,
            Parts::new(&md, &md_lens),
            Parts::new(&img, &lens),
        )
        .err_only();
        assert!(e.message().contains("first filter"), "{e}");
        let lens = [24usize, 24];
        let e = forward_parts(
            &f,
            Datatype::Uint8,
            1,
            None,
            Parts::EMPTY,
            Parts::new(&img, &lens),
        )
        .err_only();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        // Reverse checks the datatype and the format as well.
        let out = forward_one(&f, Datatype::Uint8, 1, None, &img).unwrap();
        assert!(reverse_one(&f, Datatype::Int8, 1, &out.md, &out.data, 48, false).is_err());
        let none = webp(0, true, 100.0, 4, 12);
        assert!(run_reverse(&none, &out.md, &out.data, 48).is_err());
    }

    #[test]
    fn reverse_refuses_to_run_after_another_filter() {
        let f = webp(1, true, 100.0, 4, 12);
        let img = vec![9u8; 48];
        let out = forward_one(&f, Datatype::Uint8, 1, None, &img).unwrap();
        let mut codecs = crate::engine::thread_scratch::CodecContexts::default();
        let mut ctx = StageCtx::new(Datatype::Uint8, 1, &mut codecs);
        let (mut md, mut buf) = (Vec::new(), crate::engine::parts::ScratchBuf::default());
        let e = reverse(
            &WebpOptions {
                quality: 100.0,
                input_format: 1,
                lossless: true,
                y_extent: 4,
                x_extent: 12,
            },
            &mut ctx,
            RevIn {
                md: &out.md,
                data: &out.data,
            },
            RevOut {
                md: &mut md,
                data: DataSink::Scratch {
                    buf: &mut buf,
                    limit: 1 << 20,
                },
                offsets: None,
            },
        )
        .err_only();
        assert!(e.message().contains("first filter"), "{e}");
    }

    #[test]
    fn decoded_size_must_cover_the_chunk() {
        let f = webp(1, true, 100.0, 4, 12);
        let img: Vec<u8> = (0..48u8).collect();
        let out = forward_one(&f, Datatype::Uint8, 1, None, &img).unwrap();
        // Fewer bytes in the window than in the image: the first bytes are kept (as TileDB).
        assert_eq!(run_reverse(&f, &out.md, &out.data, 30).unwrap(), img[..30]);
        // More bytes in the window than the image decodes to.
        let e = run_reverse(&f, &out.md, &out.data, 60).err_only();
        assert!(matches!(e, Error::CorruptData(_)), "{e:?}");
        // An image larger than the tile's extents is refused before it is decoded.
        let small = webp(1, true, 100.0, 2, 12);
        let e = run_reverse(&small, &out.md, &out.data, 24).err_only();
        assert!(matches!(e, Error::CorruptData(_)), "{e:?}");
        // Zero images recorded: only an empty chunk.
        assert!(
            run_reverse(&f, &unhex("00000000"), &[], 0)
                .unwrap()
                .is_empty()
        );
        assert!(run_reverse(&f, &unhex("00000000"), &[], 48).is_err());
        // Several images recorded.
        let mut md = unhex("02000000");
        md.extend_from_slice(&out.md[4..]);
        md.extend_from_slice(&out.md[4..]);
        let mut data = out.data.clone();
        data.extend_from_slice(&out.data);
        assert!(matches!(
            run_reverse(&f, &md, &data, 48),
            Err(Error::CorruptData(_))
        ));
    }

    #[test]
    fn corrupt_input_never_panics() {
        for t in TILEDB_TILES {
            let f = t.filter();
            let (md, data) = (unhex(t.md), unhex(t.data));
            let len = t.rows * t.xbytes;
            let mut state = 0x2545_f491u32;
            for i in 0..600 {
                let (mut m, mut d) = (md.clone(), data.clone());
                state = state.wrapping_mul(1664525).wrapping_add(1013904223);
                let pos = (state >> 8) as usize;
                let m_len = m.len();
                match i % 5 {
                    0 => m[pos % m_len] = (state >> 24) as u8,
                    1 => m.truncate(pos % (m.len() + 1)),
                    2 => d.truncate(pos % (d.len() + 1)),
                    3 => {
                        for k in 0..4 {
                            let p = (pos + k * 131) % d.len();
                            d[p] ^= (state >> (k * 8)) as u8 | 1;
                        }
                    }
                    _ => {
                        // Header fields: sizes and dimensions.
                        let p = pos % 32.min(d.len());
                        d[p] = (state >> 24) as u8;
                    }
                }
                let _ = run_reverse(&f, &m, &d, len);
            }
        }
    }

    #[test]
    fn whole_tiledb_tiles_through_the_pipeline() {
        // Every captured tile, framed as TileDB frames it (one chunk, chunking disabled).
        for t in TILEDB_TILES {
            let len = t.rows * t.xbytes;
            let data = unhex(t.data);
            let mut tile_bytes = 1u64.to_le_bytes().to_vec();
            tile_bytes.extend_from_slice(&(len as u32).to_le_bytes());
            tile_bytes.extend_from_slice(&(data.len() as u32).to_le_bytes());
            tile_bytes.extend_from_slice(&8u32.to_le_bytes());
            tile_bytes.extend_from_slice(&unhex(t.md));
            tile_bytes.extend_from_slice(&data);
            let mut p = crate::pipeline::Pipeline::new();
            p.push(t.filter()).unwrap();
            let tile = crate::engine::tile::Tile::new(Datatype::Uint8, 1, t.image()).unwrap();
            assert_eq!(p.filter_tile(&tile).unwrap(), tile_bytes, "{}", t.name);
            let back = p.unfilter_tile(&tile_bytes, Datatype::Uint8, 1).unwrap();
            assert_eq!(hex(&Sha256::digest(back.data())), t.readback_sha256);
        }
        // A 256 × 384-byte RGB tile (98304 bytes, above the 64 KiB chunk size) that TileDB
        // 2.30 wrote losslessly as one chunk of 2260 bytes in all.
        let img = image(256, 384, 3, 1);
        let mut p = crate::pipeline::Pipeline::new();
        p.push(webp(1, true, 100.0, 256, 384)).unwrap();
        let tile = crate::engine::tile::Tile::new(Datatype::Uint8, 1, img.clone()).unwrap();
        let filtered = p.filter_tile(&tile).unwrap();
        assert_eq!(filtered.len(), 2260);
        assert_eq!(
            hex(&filtered[..28]),
            "010000000000000000800100b80800000800000001000000b8080000"
        );
        assert_eq!(
            hex(&Sha256::digest(&filtered)),
            "bad2bd06f90142b7c8781afa43fc24abebc70984280d57a8e3d036ad44a258e3"
        );
        let back = p.unfilter_tile(&filtered, Datatype::Uint8, 1).unwrap();
        assert!(back.data() == &img[..]);
    }
}
