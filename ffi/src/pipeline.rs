//! `tdb_pipeline_t`: building (also from specs), configuring, serializing and running a filter
//! pipeline.

use super::constants::tdb_status_t;
use super::error::tdb_error_t;
use super::guard::{self, Out, arg, arg_mut, guard};
use super::tile::tdb_tile_t;
use super::{tdb_datatype_t, tdb_filter_option_t, tdb_filter_type_t};
use std::ffi::{c_char, c_void};
use tdbfilter::error::Error;
use tdbfilter::filters::config::{OptionKind, OptionValue};
use tdbfilter::{Datatype, FilterOption, FilterType, Pipeline};

/// A filter pipeline: an ordered list of filters and its settings. Not thread-safe to modify;
/// filtering and unfiltering through a `const` pipeline from several threads is safe.
pub struct tdb_pipeline_t {
    inner: Pipeline,
}

impl tdb_pipeline_t {
    /// A new pipeline handle holding `inner`.
    pub(crate) fn new_raw(inner: Pipeline) -> *mut tdb_pipeline_t {
        guard::new_handle(tdb_pipeline_t { inner })
    }

    pub(crate) fn pipeline(&self) -> &Pipeline {
        &self.inner
    }
}

/// Creates an empty pipeline (no filters, max chunk size 65536, all cores).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_create(
    pipeline: *mut *mut tdb_pipeline_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        Out::new(pipeline, "pipeline")?.set(tdb_pipeline_t::new_raw(Pipeline::new()));
        Ok(())
    })
}

/// Frees a pipeline. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_free(pipeline: *mut tdb_pipeline_t) {
    // SAFETY: the caller passes NULL or a pipeline from this library, not yet freed.
    unsafe { guard::free_handle(pipeline) }
}

/// Appends a filter with TileDB's default options; every filter type of TileDB 2.30 is
/// implemented. Unknown types, and `TDB_FILTER_AES_256_GCM` (set a key with
/// `tdb_pipeline_set_encryption_key` instead), are `TDB_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_add_filter(
    pipeline: *mut tdb_pipeline_t,
    r#type: tdb_filter_type_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg_mut(pipeline, "pipeline")?;
        p.inner.add_filter(FilterType::from_u32(r#type)?)
    })
}

/// Checks that a caller's option value is the option's C type: `value` non-NULL and
/// `value_size` that type's size, else `InvalidArgument` naming the option and the type.
fn option_value_size(
    option: FilterOption,
    value_null: bool,
    value_size: usize,
) -> tdbfilter::Result<OptionKind> {
    let kind = option.kind();
    let expected = || {
        format!(
            "{} is {} ({} bytes)",
            option.name(),
            kind.c_type(),
            kind.size()
        )
    };
    if value_null {
        return Err(Error::invalid(format!("value is NULL; {}", expected())));
    }
    if value_size != kind.size() {
        return Err(Error::invalid(format!(
            "value_size is {value_size}; option {}",
            expected()
        )));
    }
    Ok(kind)
}

/// Builds a pipeline from a spec: a comma-separated list of TileDB filter names in lower case,
/// each optionally followed by `:LEVEL` (or `:WINDOW`) and `:option=value` pairs, e.g.
/// `"bitshuffle,zstd:3"`, `"gzip:level=9"`, `"scale_float:factor=0.5:offset=0:byte_width=4"`.
/// `"none"` or `""` is the empty pipeline. A malformed spec is `TDB_ERR_INVALID_ARGUMENT`
/// naming the filter or option that failed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_from_spec(
    spec: *const c_char,
    pipeline: *mut *mut tdb_pipeline_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(pipeline, "pipeline")?;
        let inner = tdbfilter::pipeline::spec::parse(guard::c_str(spec, "spec")?)?;
        out.set(tdb_pipeline_t::new_raw(inner));
        Ok(())
    })
}

/// Writes the pipeline's spec (the inverse of `tdb_pipeline_from_spec`) as a NUL-terminated
/// string into `buffer` (`capacity` bytes). `*size` receives the length including the NUL;
/// when `buffer` is NULL or too small, `*size` is still set and the call returns
/// `TDB_ERR_BUFFER_TOO_SMALL`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_to_spec(
    pipeline: *const tdb_pipeline_t,
    buffer: *mut c_char,
    capacity: usize,
    size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let size = Out::new(size, "size")?;
        let text = tdbfilter::pipeline::spec::to_spec(&p.inner);
        guard::copy_c_string_out(&text, buffer, capacity, size, "the pipeline spec")
    })
}

/// Sets an option of filter `filter_index` from `value`, a `value_size`-byte value of the
/// option's C type (`int32_t` level 4, `uint32_t` windows 4, `uint64_t` byte width 8,
/// `double` factor/offset 8, `float` quality 4, `uint8_t` format/lossless/reinterpret
/// datatype 1). Another size is `TDB_ERR_INVALID_ARGUMENT` naming the option and its type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_set_option(
    pipeline: *mut tdb_pipeline_t,
    filter_index: u32,
    option: tdb_filter_option_t,
    value: *const c_void,
    value_size: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg_mut(pipeline, "pipeline")?;
        let option = FilterOption::from_u32(option)?;
        let kind = option_value_size(option, value.is_null(), value_size)?;
        let bytes = guard::bytes(value.cast(), value_size, "value")?;
        let v = OptionValue::from_ne_bytes(kind, bytes).expect("size checked");
        p.inner
            .filter_mut(filter_index as usize)?
            .set_option(option, v)
    })
}

/// Reads an option of filter `filter_index` into `value`, `value_size` writable bytes that
/// must be the option's C type's size (as for `tdb_pipeline_set_option`), else
/// `TDB_ERR_INVALID_ARGUMENT` naming the option and its type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_option(
    pipeline: *const tdb_pipeline_t,
    filter_index: u32,
    option: tdb_filter_option_t,
    value: *mut c_void,
    value_size: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let option = FilterOption::from_u32(option)?;
        option_value_size(option, value.is_null(), value_size)?;
        let v = p.inner.filter(filter_index as usize)?.get_option(option)?;
        guard::bytes_mut(value.cast(), value_size, "value")?.copy_from_slice(&v.to_ne_bytes());
        Ok(())
    })
}

/// The number of filters.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_filter_count(
    pipeline: *const tdb_pipeline_t,
    count: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        Out::new(count, "count")?.set(p.inner.filters().len() as u32);
        Ok(())
    })
}

/// The type of filter `filter_index`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_filter_type(
    pipeline: *const tdb_pipeline_t,
    filter_index: u32,
    r#type: *mut tdb_filter_type_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let out = Out::new(r#type, "type")?;
        out.set(p.inner.filter(filter_index as usize)?.filter_type() as u32);
        Ok(())
    })
}

/// Sets the stored max chunk size. As in TileDB 2.30 only 0 changes writing: the whole tile
/// becomes one chunk; any other value chunks at 64 KiB.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_set_max_chunk_size(
    pipeline: *mut tdb_pipeline_t,
    max_chunk_size: u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        arg_mut(pipeline, "pipeline")?
            .inner
            .set_max_chunk_size(max_chunk_size);
        Ok(())
    })
}

/// Sets how many threads filter and unfilter the chunks of one tile: 0 = all cores (the
/// default), else 1 to 256; more is `TDB_ERR_INVALID_ARGUMENT`. Every array and pipeline with
/// the same count shares one thread pool, started on first use and kept for the process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_set_threads(
    pipeline: *mut tdb_pipeline_t,
    threads: u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg_mut(pipeline, "pipeline")?;
        p.inner
            .set_threads(tdbfilter::pipeline::check_threads(threads.into())?);
        Ok(())
    })
}

/// Skips checksum verification on read (TileDB's `sm.skip_checksum_validation`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_set_skip_checksum_validation(
    pipeline: *mut tdb_pipeline_t,
    skip: bool,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        arg_mut(pipeline, "pipeline")?
            .inner
            .set_skip_checksum_validation(skip);
        Ok(())
    })
}

/// Serializes the pipeline exactly as TileDB 2.30 does. With a NULL or too small `buffer`
/// returns `TDB_ERR_BUFFER_TOO_SMALL` and sets `*size` to the bytes needed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_serialize(
    pipeline: *const tdb_pipeline_t,
    buffer: *mut u8,
    capacity: usize,
    size: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let size = Out::new(size, "size")?;
        guard::copy_out(
            &p.inner.serialize(),
            buffer,
            capacity,
            size,
            "the serialized pipeline",
        )
    })
}

/// Parses a serialized pipeline (exactly `size` bytes) with the option layouts of
/// `format_version` (22 for TileDB 2.30 schemas).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_deserialize(
    bytes: *const u8,
    size: usize,
    format_version: u32,
    pipeline: *mut *mut tdb_pipeline_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let out = Out::new(pipeline, "pipeline")?;
        let inner = Pipeline::deserialize(guard::bytes(bytes, size, "bytes")?, format_version)?;
        out.set(tdb_pipeline_t::new_raw(inner));
        Ok(())
    })
}

/// Filters a fixed-size tile; `*filtered` receives TileDB's filtered tile bytes as a new tile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_filter(
    pipeline: *const tdb_pipeline_t,
    tile: *const tdb_tile_t,
    filtered: *mut *mut tdb_tile_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let t = arg(tile, "tile")?;
        let out = Out::new(filtered, "filtered")?;
        let bytes = p.inner.filter_tile(t.tile())?;
        out.set(tdb_tile_t::new_raw(tdbfilter::Tile::new(
            t.tile().datatype(),
            t.tile().cell_size(),
            bytes,
        )?));
        Ok(())
    })
}

/// Unfilters one filtered tile of `size` bytes into a new tile of `datatype` cells of
/// `cell_size` bytes; its length is the sum of the chunks' original lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_unfilter(
    pipeline: *const tdb_pipeline_t,
    filtered: *const u8,
    size: usize,
    datatype: tdb_datatype_t,
    cell_size: u64,
    tile: *mut *mut tdb_tile_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let out = Out::new(tile, "tile")?;
        let input = guard::bytes(filtered, size, "filtered")?;
        let datatype = Datatype::try_from_u32(datatype)?;
        let t = p.inner.unfilter_tile(input, datatype, cell_size)?;
        out.set(tdb_tile_t::new_raw(t));
        Ok(())
    })
}

/// Filters a var-size tile: `*filtered_offsets` receives the filtered offsets tile (through
/// `offsets_pipeline`, TileDB's schema offsets pipeline) and `*filtered_data` the filtered data
/// tile (through `data_pipeline`). With RLE or DICTIONARY on STRING_ASCII/UTF8 the offsets
/// travel inside the data tile and the offsets tile is TileDB's 8-byte empty marker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_filter_var(
    data_pipeline: *const tdb_pipeline_t,
    offsets_pipeline: *const tdb_pipeline_t,
    tile: *const tdb_tile_t,
    filtered_offsets: *mut *mut tdb_tile_t,
    filtered_data: *mut *mut tdb_tile_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let data_p = arg(data_pipeline, "data_pipeline")?;
        let offsets_p = arg(offsets_pipeline, "offsets_pipeline")?;
        let t = arg(tile, "tile")?;
        let out_offsets = Out::new(filtered_offsets, "filtered_offsets")?;
        let out_data = Out::new(filtered_data, "filtered_data")?;
        let (offsets, data) = data_p.inner.filter_var(&offsets_p.inner, t.tile())?;
        let offsets = tdbfilter::Tile::new(Datatype::Uint64, 8, offsets)?;
        let data = tdbfilter::Tile::new(t.tile().datatype(), t.tile().cell_size(), data)?;
        out_offsets.set(tdb_tile_t::new_raw(offsets));
        out_data.set(tdb_tile_t::new_raw(data));
        Ok(())
    })
}

/// Unfilters a var-size tile from its filtered offsets tile (`offsets_size` bytes) and filtered
/// data tile (`data_size` bytes) into a new var-size tile of `datatype`. Offsets that decrease
/// or point past the data are `TDB_ERR_CORRUPT_DATA`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_unfilter_var(
    data_pipeline: *const tdb_pipeline_t,
    offsets_pipeline: *const tdb_pipeline_t,
    filtered_offsets: *const u8,
    offsets_size: usize,
    filtered_data: *const u8,
    data_size: usize,
    datatype: tdb_datatype_t,
    tile: *mut *mut tdb_tile_t,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let data_p = arg(data_pipeline, "data_pipeline")?;
        let offsets_p = arg(offsets_pipeline, "offsets_pipeline")?;
        let out = Out::new(tile, "tile")?;
        let offsets = guard::bytes(filtered_offsets, offsets_size, "filtered_offsets")?;
        let data = guard::bytes(filtered_data, data_size, "filtered_data")?;
        let datatype = Datatype::try_from_u32(datatype)?;
        let t = data_p
            .inner
            .unfilter_var(&offsets_p.inner, offsets, data, datatype)?;
        out.set(tdb_tile_t::new_raw(t));
        Ok(())
    })
}

/// Sets a WEBP filter's tile extents (TileDB fills them from the array schema): `y_extent`
/// rows and `x_extent` bytes per row (pixels × 3 or 4). Serialized in the WEBP options.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_set_webp_extents(
    pipeline: *mut tdb_pipeline_t,
    filter_index: u32,
    y_extent: u16,
    x_extent: u16,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        arg_mut(pipeline, "pipeline")?
            .inner
            .filter_mut(filter_index as usize)?
            .set_webp_extents(y_extent, x_extent)
    })
}

/// Sets the pipeline's AES-256-GCM key (`key_len` must be 32). As in TileDB, the encryption
/// filter is then appended to every filter and unfilter call (never serialized); each part gets
/// a fresh random IV. The key is copied, zeroed when the pipeline is freed, and never appears
/// in messages. Set the key on the offsets and validity pipelines too for encrypted arrays.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_set_encryption_key(
    pipeline: *mut tdb_pipeline_t,
    key: *const u8,
    key_len: usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg_mut(pipeline, "pipeline")?;
        if key.is_null() {
            return Err(Error::invalid("key is NULL"));
        }
        p.inner
            .set_encryption_key(guard::bytes(key, key_len, "key")?)
    })
}

/// An upper bound on the filtered size of a fixed-size tile of `size` bytes through this
/// pipeline (whatever the datatype and contents): a `tdb_pipeline_filter_into` buffer of this
/// size always suffices.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_filtered_size_bound(
    pipeline: *const tdb_pipeline_t,
    size: usize,
    bound: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        Out::new(bound, "bound")?.set(p.inner.filtered_size_bound(size));
        Ok(())
    })
}

/// Writes `result`'s needed size to `written` when the buffer was too small.
fn report_needed(result: tdbfilter::Result<usize>, written: Out<usize>) -> tdbfilter::Result<()> {
    match result {
        Ok(n) => {
            written.set(n);
            Ok(())
        }
        Err(e) => {
            if let Error::BufferTooSmall { needed, .. } = &e {
                written.set(*needed);
            }
            Err(e)
        }
    }
}

/// Filters a fixed-size tile into the caller's buffer `out` of `capacity` bytes; `*written`
/// receives the filtered tile's size. Too small: `TDB_ERR_BUFFER_TOO_SMALL` with `*written` set
/// to a size that suffices (`tdb_pipeline_filtered_size_bound`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_filter_into(
    pipeline: *const tdb_pipeline_t,
    tile: *const tdb_tile_t,
    out: *mut u8,
    capacity: usize,
    written: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let t = arg(tile, "tile")?;
        let written = Out::new(written, "written")?;
        let buf = guard::bytes_mut(out, capacity, "out")?;
        report_needed(p.inner.filter_tile_into(t.tile(), buf), written)
    })
}

/// Filters `size` bytes of fixed-size cells of `datatype` (`cell_size` bytes each) straight
/// from the caller's memory into the caller's buffer `out` of `capacity` bytes, without a
/// `tdb_tile_t` (no copy of the input); otherwise as `tdb_pipeline_filter_into`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_filter_cells_into(
    pipeline: *const tdb_pipeline_t,
    data: *const u8,
    size: usize,
    datatype: tdb_datatype_t,
    cell_size: u64,
    out: *mut u8,
    capacity: usize,
    written: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let input = guard::bytes(data, size, "data")?;
        let datatype = Datatype::try_from_u32(datatype)?;
        let written = Out::new(written, "written")?;
        let buf = guard::bytes_mut(out, capacity, "out")?;
        report_needed(
            p.inner.filter_cells_into(datatype, cell_size, input, buf),
            written,
        )
    })
}

/// Unfilters one filtered tile of `size` bytes into the caller's buffer `out` of `capacity`
/// bytes; `*written` receives the unfiltered size. Too small: `TDB_ERR_BUFFER_TOO_SMALL` with
/// `*written` set to the exact size needed, before any decoding.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_unfilter_into(
    pipeline: *const tdb_pipeline_t,
    filtered: *const u8,
    size: usize,
    datatype: tdb_datatype_t,
    cell_size: u64,
    out: *mut c_void,
    capacity: usize,
    written: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    let run = |p: &Pipeline, input: &[u8], dt, buf: &mut [u8]| {
        p.unfilter_tile_into(input, dt, cell_size, buf)
    };
    unfilter_into(
        pipeline,
        (filtered, size),
        datatype,
        (out.cast(), capacity),
        written,
        error,
        run,
    )
}

/// The common part of the `*_unfilter_*_into` calls: checks the arguments, runs `run` on the
/// input and the caller's buffer, and reports the size written or needed.
fn unfilter_into(
    pipeline: *const tdb_pipeline_t,
    (filtered, size): (*const u8, usize),
    datatype: tdb_datatype_t,
    (out, capacity): (*mut u8, usize),
    written: *mut usize,
    error: *mut *mut tdb_error_t,
    run: impl FnOnce(&Pipeline, &[u8], Datatype, &mut [u8]) -> tdbfilter::Result<usize>,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        let written = Out::new(written, "written")?;
        let input = guard::bytes(filtered, size, "filtered")?;
        let datatype = Datatype::try_from_u32(datatype)?;
        let buf = guard::bytes_mut(out, capacity, "out")?;
        report_needed(run(&p.inner, input, datatype, buf), written)
    })
}

/// Chooses GZIP's writer. `identical = true` (the default): the bytes of zlib 1.3.1 called as
/// TileDB calls it (from this library's zlib-identical deflate, 1.5x zlib's speed), so every
/// byte equals TileDB's. `false`: libdeflate, faster still, valid zlib streams TileDB reads,
/// but sometimes a few percent larger than TileDB's. Reading is unaffected.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_set_gzip_identical(
    pipeline: *mut tdb_pipeline_t,
    identical: bool,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        arg_mut(pipeline, "pipeline")?
            .inner
            .set_gzip_identical(identical);
        Ok(())
    })
}

/// A job handed to a host executor: call it as `job(job_ctx, i)`.
pub type tdb_job_fn = Option<unsafe extern "C" fn(job_ctx: *mut c_void, i: usize)>;

/// A host executor: must call `job(job_ctx, i)` exactly once for every `i` in `[0, n_jobs)`,
/// on any threads and in any order (concurrently or not), and return only when every call has
/// returned. It may be called from several threads at once when the pipeline is.
pub type tdb_executor_fn = Option<
    unsafe extern "C" fn(ctx: *mut c_void, n_jobs: usize, job: tdb_job_fn, job_ctx: *mut c_void),
>;

/// A host executor registered through the C API.
struct CExecutor {
    run: unsafe extern "C" fn(*mut c_void, usize, tdb_job_fn, *mut c_void),
    ctx: *mut c_void,
}

// SAFETY: the caller of tdb_pipeline_set_executor guarantees that `run` may be called with
// `ctx` from any thread, concurrently (the documented contract).
unsafe impl Send for CExecutor {}
// SAFETY: as above; CExecutor holds no Rust state of its own.
unsafe impl Sync for CExecutor {}

/// What a C job call refers to: the Rust job to run.
struct JobCtx<'a> {
    job: &'a (dyn Fn(usize) + Sync),
}

/// Runs job `i` of the `JobCtx` behind `job_ctx`. Panics never reach the host: the core's job
/// wrapper already turns them into errors, and anything left is caught here.
unsafe extern "C" fn run_job(job_ctx: *mut c_void, i: usize) {
    // SAFETY: `job_ctx` is the `JobCtx` that CExecutor::run passed to the host, alive until
    // `run` returns, which the executor contract makes after every job call has returned.
    let ctx = unsafe { &*job_ctx.cast::<JobCtx<'_>>() };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (ctx.job)(i)));
}

impl tdbfilter::pipeline::Executor for CExecutor {
    fn run(&self, n_jobs: usize, job: &(dyn Fn(usize) + Sync)) {
        let ctx = JobCtx { job };
        // SAFETY: `run` is the host's function, called as its contract says; `ctx` outlives
        // the call, which returns only after every job has returned.
        unsafe {
            (self.run)(
                self.ctx,
                n_jobs,
                Some(run_job),
                (&ctx as *const JobCtx<'_>).cast_mut().cast(),
            )
        };
    }
}

/// Runs the pipeline's chunk jobs on the host's executor instead of tdbfilter's own thread pool
/// (for engines and runtimes with their own schedulers). `run` is called once per parallel
/// step of a tile (see `tdb_executor_fn` for its contract) with `ctx` as its first argument;
/// `ctx` must stay valid while the pipeline uses it. `run` NULL goes back to the built-in pool.
/// The thread count (`tdb_pipeline_set_threads`) still decides how many jobs a tile is split
/// into; with 1 thread no job is handed out. Results are identical either way. A job the
/// executor never runs makes the call fail with `TDB_ERR_INTERNAL`, never return wrong bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_set_executor(
    pipeline: *mut tdb_pipeline_t,
    run: tdb_executor_fn,
    ctx: *mut c_void,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg_mut(pipeline, "pipeline")?;
        p.inner.set_executor(
            run.map(|run| std::sync::Arc::new(CExecutor { run, ctx }) as std::sync::Arc<_>),
        );
        Ok(())
    })
}

/// Limits what one unfilter call through this pipeline may allocate for its output tile to
/// `limit` bytes (0: no limit beyond the format's own bounds, the default). A tile that would
/// need more fails with `TDB_ERR_OUT_OF_MEMORY`, naming the size it needs and the limit,
/// before anything is allocated. Calls writing into the caller's buffer (`*_into`) allocate
/// no output and are not limited.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_set_memory_limit(
    pipeline: *mut tdb_pipeline_t,
    limit: u64,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg_mut(pipeline, "pipeline")?;
        p.inner
            .set_memory_limit(if limit == 0 { None } else { Some(limit) });
        Ok(())
    })
}

/// Sets the format version of the tiles the pipeline reads and writes (1 to 23; a pipeline
/// from `tdb_pipeline_deserialize` has the version it was parsed with, a built one 22). Set it
/// to a fragment's version (the suffix of its name) before unfiltering that fragment's tiles:
/// it decides the datatype each filter works on (chained through SCALE_FLOAT, XOR and the
/// delta filters' reinterpret type from version 20, TileDB 2.17; the tile's datatype at every
/// stage before), and the other version-dependent rules of docs/FORMAT.md §2.2.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_set_format_version(
    pipeline: *mut tdb_pipeline_t,
    format_version: u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        arg_mut(pipeline, "pipeline")?
            .inner
            .set_format_version(format_version)
    })
}

/// Gets the format version of the tiles the pipeline reads and writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_format_version(
    pipeline: *const tdb_pipeline_t,
    format_version: *mut u32,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    guard(error, || {
        let p = arg(pipeline, "pipeline")?;
        Out::new(format_version, "format_version")?.set(p.inner.format_version());
        Ok(())
    })
}

/// Unfilters a nullable attribute's validity tile (one byte per cell; this pipeline is the
/// schema's validity pipeline, with the fragment's format version set) into the caller's
/// buffer, like `tdb_pipeline_unfilter_into`. `attribute_datatype` is the attribute's type and
/// `dense` whether the fragment is dense: dense fragments of format versions 9–14 (TileDB
/// 2.3–2.10) filtered validity tiles as the attribute's datatype, all others as UINT8.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdb_pipeline_unfilter_validity_into(
    pipeline: *const tdb_pipeline_t,
    filtered: *const u8,
    size: usize,
    attribute_datatype: tdb_datatype_t,
    dense: bool,
    out: *mut u8,
    capacity: usize,
    written: *mut usize,
    error: *mut *mut tdb_error_t,
) -> tdb_status_t {
    let run = |p: &Pipeline, input: &[u8], dt, buf: &mut [u8]| {
        p.unfilter_validity_tile_into(input, dt, dense, buf)
    };
    unfilter_into(
        pipeline,
        (filtered, size),
        attribute_datatype,
        (out, capacity),
        written,
        error,
        run,
    )
}
