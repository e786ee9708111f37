"""
    LibTDBFilter

One `ccall` per function of tdbfilter's C API (`include/tdbfilter.h`), with the C signature
spelled out in Julia types. `bindings/julia/check_ccalls.py` checks every call here against the
header in the test suite: names, argument and return types, integer widths, and that no
function of the header is missing.

The library is `ENV["TDBFILTER_LIBRARY"]` (a path) when set at precompile time, else
`libtdbfilter` found by the system's loader (an installed prefix on `LD_LIBRARY_PATH` or in
the loader's paths).
"""
module LibTDBFilter

const libtdbfilter = get(ENV, "TDBFILTER_LIBRARY", "libtdbfilter")

# Opaque handles.
const Error = Cvoid
const PipelineHandle = Cvoid
const TileHandle = Cvoid

"""Mirror of `tdb_generic_tile_header_t`."""
struct GenericTileHeader
    version::UInt32
    persisted_size::UInt64
    tile_size::UInt64
    datatype::UInt32
    cell_size::UInt64
    encryption_type::UInt32
    filter_pipeline_size::UInt32
    header_size::UInt64
    total_size::UInt64
end
GenericTileHeader() = GenericTileHeader(0, 0, 0, 0, 0, 0, 0, 0, 0)

# Errors.
tdb_error_status(error) = ccall((:tdb_error_status, libtdbfilter), Cint, (Ptr{Error},), error)
tdb_error_message(error) = ccall((:tdb_error_message, libtdbfilter), Cstring, (Ptr{Error},), error)
tdb_error_free(error) = ccall((:tdb_error_free, libtdbfilter), Cvoid, (Ptr{Error},), error)

# Generic tiles.
tdb_generic_tile_read(bytes, size, key, key_len, tile, consumed, error) =
    ccall((:tdb_generic_tile_read, libtdbfilter), Cint,
          (Ptr{UInt8}, Csize_t, Ptr{UInt8}, Csize_t, Ref{Ptr{TileHandle}}, Ref{UInt64}, Ref{Ptr{Error}}),
          bytes, size, key, key_len, tile, consumed, error)
tdb_generic_tile_header(bytes, size, header, error) =
    ccall((:tdb_generic_tile_header, libtdbfilter), Cint,
          (Ptr{UInt8}, Csize_t, Ref{GenericTileHeader}, Ref{Ptr{Error}}),
          bytes, size, header, error)
tdb_generic_tile_pipeline(bytes, size, pipeline, error) =
    ccall((:tdb_generic_tile_pipeline, libtdbfilter), Cint,
          (Ptr{UInt8}, Csize_t, Ref{Ptr{PipelineHandle}}, Ref{Ptr{Error}}),
          bytes, size, pipeline, error)
tdb_generic_tile_write(pipeline, tile, generic, error) =
    ccall((:tdb_generic_tile_write, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{TileHandle}, Ref{Ptr{TileHandle}}, Ref{Ptr{Error}}),
          pipeline, tile, generic, error)
tdb_generic_tile_default_pipeline(pipeline, error) =
    ccall((:tdb_generic_tile_default_pipeline, libtdbfilter), Cint,
          (Ref{Ptr{PipelineHandle}}, Ref{Ptr{Error}}), pipeline, error)

# Pipelines.
tdb_pipeline_create(pipeline, error) =
    ccall((:tdb_pipeline_create, libtdbfilter), Cint, (Ref{Ptr{PipelineHandle}}, Ref{Ptr{Error}}),
          pipeline, error)
tdb_pipeline_free(pipeline) =
    ccall((:tdb_pipeline_free, libtdbfilter), Cvoid, (Ptr{PipelineHandle},), pipeline)
tdb_pipeline_add_filter(pipeline, type, error) =
    ccall((:tdb_pipeline_add_filter, libtdbfilter), Cint, (Ptr{PipelineHandle}, UInt32, Ref{Ptr{Error}}),
          pipeline, type, error)
tdb_pipeline_set_option(pipeline, filter_index, option, value, error) =
    ccall((:tdb_pipeline_set_option, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, UInt32, UInt32, Ptr{Cvoid}, Ref{Ptr{Error}}),
          pipeline, filter_index, option, value, error)
tdb_pipeline_get_option(pipeline, filter_index, option, value, error) =
    ccall((:tdb_pipeline_get_option, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, UInt32, UInt32, Ptr{Cvoid}, Ref{Ptr{Error}}),
          pipeline, filter_index, option, value, error)
tdb_pipeline_filter_count(pipeline, count, error) =
    ccall((:tdb_pipeline_filter_count, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ref{UInt32}, Ref{Ptr{Error}}), pipeline, count, error)
tdb_pipeline_filter_type(pipeline, filter_index, type, error) =
    ccall((:tdb_pipeline_filter_type, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, UInt32, Ref{UInt32}, Ref{Ptr{Error}}),
          pipeline, filter_index, type, error)
tdb_pipeline_set_max_chunk_size(pipeline, max_chunk_size, error) =
    ccall((:tdb_pipeline_set_max_chunk_size, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, UInt32, Ref{Ptr{Error}}), pipeline, max_chunk_size, error)
tdb_pipeline_set_threads(pipeline, threads, error) =
    ccall((:tdb_pipeline_set_threads, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, UInt32, Ref{Ptr{Error}}), pipeline, threads, error)
tdb_pipeline_set_skip_checksum_validation(pipeline, skip, error) =
    ccall((:tdb_pipeline_set_skip_checksum_validation, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Bool, Ref{Ptr{Error}}), pipeline, skip, error)
tdb_pipeline_serialize(pipeline, buffer, capacity, size, error) =
    ccall((:tdb_pipeline_serialize, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{UInt8}, Csize_t, Ref{Csize_t}, Ref{Ptr{Error}}),
          pipeline, buffer, capacity, size, error)
tdb_pipeline_deserialize(bytes, size, format_version, pipeline, error) =
    ccall((:tdb_pipeline_deserialize, libtdbfilter), Cint,
          (Ptr{UInt8}, Csize_t, UInt32, Ref{Ptr{PipelineHandle}}, Ref{Ptr{Error}}),
          bytes, size, format_version, pipeline, error)
tdb_pipeline_filter(pipeline, tile, filtered, error) =
    ccall((:tdb_pipeline_filter, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{TileHandle}, Ref{Ptr{TileHandle}}, Ref{Ptr{Error}}),
          pipeline, tile, filtered, error)
tdb_pipeline_unfilter(pipeline, filtered, size, datatype, cell_size, tile, error) =
    ccall((:tdb_pipeline_unfilter, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{UInt8}, Csize_t, UInt32, UInt64, Ref{Ptr{TileHandle}}, Ref{Ptr{Error}}),
          pipeline, filtered, size, datatype, cell_size, tile, error)
tdb_pipeline_filter_var(data_pipeline, offsets_pipeline, tile, filtered_offsets, filtered_data, error) =
    ccall((:tdb_pipeline_filter_var, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{PipelineHandle}, Ptr{TileHandle}, Ref{Ptr{TileHandle}},
           Ref{Ptr{TileHandle}}, Ref{Ptr{Error}}),
          data_pipeline, offsets_pipeline, tile, filtered_offsets, filtered_data, error)
tdb_pipeline_unfilter_var(data_pipeline, offsets_pipeline, filtered_offsets, offsets_size,
                          filtered_data, data_size, datatype, tile, error) =
    ccall((:tdb_pipeline_unfilter_var, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{PipelineHandle}, Ptr{UInt8}, Csize_t, Ptr{UInt8}, Csize_t,
           UInt32, Ref{Ptr{TileHandle}}, Ref{Ptr{Error}}),
          data_pipeline, offsets_pipeline, filtered_offsets, offsets_size, filtered_data,
          data_size, datatype, tile, error)
tdb_pipeline_set_webp_extents(pipeline, filter_index, y_extent, x_extent, error) =
    ccall((:tdb_pipeline_set_webp_extents, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, UInt32, UInt16, UInt16, Ref{Ptr{Error}}),
          pipeline, filter_index, y_extent, x_extent, error)
tdb_pipeline_set_encryption_key(pipeline, key, key_len, error) =
    ccall((:tdb_pipeline_set_encryption_key, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{UInt8}, Csize_t, Ref{Ptr{Error}}), pipeline, key, key_len, error)
tdb_pipeline_filtered_size_bound(pipeline, size, bound, error) =
    ccall((:tdb_pipeline_filtered_size_bound, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Csize_t, Ref{Csize_t}, Ref{Ptr{Error}}), pipeline, size, bound, error)
tdb_pipeline_filter_into(pipeline, tile, out, capacity, written, error) =
    ccall((:tdb_pipeline_filter_into, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{TileHandle}, Ptr{UInt8}, Csize_t, Ref{Csize_t}, Ref{Ptr{Error}}),
          pipeline, tile, out, capacity, written, error)
tdb_pipeline_unfilter_into(pipeline, filtered, size, datatype, cell_size, out, capacity, written, error) =
    ccall((:tdb_pipeline_unfilter_into, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{UInt8}, Csize_t, UInt32, UInt64, Ptr{Cvoid}, Csize_t,
           Ref{Csize_t}, Ref{Ptr{Error}}),
          pipeline, filtered, size, datatype, cell_size, out, capacity, written, error)
tdb_pipeline_set_gzip_identical(pipeline, identical, error) =
    ccall((:tdb_pipeline_set_gzip_identical, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Bool, Ref{Ptr{Error}}), pipeline, identical, error)
tdb_pipeline_set_executor(pipeline, run, ctx, error) =
    ccall((:tdb_pipeline_set_executor, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{Cvoid}, Ptr{Cvoid}, Ref{Ptr{Error}}), pipeline, run, ctx, error)
tdb_pipeline_set_memory_limit(pipeline, limit, error) =
    ccall((:tdb_pipeline_set_memory_limit, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, UInt64, Ref{Ptr{Error}}), pipeline, limit, error)
tdb_pipeline_set_format_version(pipeline, format_version, error) =
    ccall((:tdb_pipeline_set_format_version, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, UInt32, Ref{Ptr{Error}}), pipeline, format_version, error)
tdb_pipeline_format_version(pipeline, format_version, error) =
    ccall((:tdb_pipeline_format_version, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ref{UInt32}, Ref{Ptr{Error}}), pipeline, format_version, error)
tdb_pipeline_unfilter_validity_into(pipeline, filtered, size, attribute_datatype, dense, out,
                                    capacity, written, error) =
    ccall((:tdb_pipeline_unfilter_validity_into, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{UInt8}, Csize_t, UInt32, Bool, Ptr{UInt8}, Csize_t,
           Ref{Csize_t}, Ref{Ptr{Error}}),
          pipeline, filtered, size, attribute_datatype, dense, out, capacity, written, error)
tdb_pipeline_from_spec(spec, pipeline, error) =
    ccall((:tdb_pipeline_from_spec, libtdbfilter), Cint,
          (Cstring, Ref{Ptr{PipelineHandle}}, Ref{Ptr{Error}}), spec, pipeline, error)
tdb_pipeline_to_spec(pipeline, buffer, capacity, size, error) =
    ccall((:tdb_pipeline_to_spec, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{UInt8}, Csize_t, Ref{Csize_t}, Ref{Ptr{Error}}),
          pipeline, buffer, capacity, size, error)

# Tiles.
tdb_tile_create(datatype, cell_size, data, size, tile, error) =
    ccall((:tdb_tile_create, libtdbfilter), Cint,
          (UInt32, UInt64, Ptr{Cvoid}, Csize_t, Ref{Ptr{TileHandle}}, Ref{Ptr{Error}}),
          datatype, cell_size, data, size, tile, error)
tdb_tile_create_var(datatype, offsets, cell_count, data, size, tile, error) =
    ccall((:tdb_tile_create_var, libtdbfilter), Cint,
          (UInt32, Ptr{UInt64}, Csize_t, Ptr{Cvoid}, Csize_t, Ref{Ptr{TileHandle}}, Ref{Ptr{Error}}),
          datatype, offsets, cell_count, data, size, tile, error)
tdb_tile_offsets(tile, offsets, cell_count) =
    ccall((:tdb_tile_offsets, libtdbfilter), Cint,
          (Ptr{TileHandle}, Ref{Ptr{UInt64}}, Ref{Csize_t}), tile, offsets, cell_count)
tdb_tile_data(tile, data, size) =
    ccall((:tdb_tile_data, libtdbfilter), Cint,
          (Ptr{TileHandle}, Ref{Ptr{UInt8}}, Ref{Csize_t}), tile, data, size)
tdb_tile_free(tile) = ccall((:tdb_tile_free, libtdbfilter), Cvoid, (Ptr{TileHandle},), tile)
tdb_filtered_tile_size(bytes, size, tile_size, error) =
    ccall((:tdb_filtered_tile_size, libtdbfilter), Cint,
          (Ptr{UInt8}, Csize_t, Ref{UInt64}, Ref{Ptr{Error}}), bytes, size, tile_size, error)
tdb_version() = ccall((:tdb_version, libtdbfilter), Cstring, ())

end # module
