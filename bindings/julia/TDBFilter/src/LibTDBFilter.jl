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
const ArrayHandle = Cvoid
const WriterHandle = Cvoid
const ConfigHandle = Cvoid
const ResultHandle = Cvoid
const GroupHandle = Cvoid
const OptionsHandle = Cvoid
const QueryHandle = Cvoid

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
tdb_pipeline_set_option(pipeline, filter_index, option, value, value_size, error) =
    ccall((:tdb_pipeline_set_option, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, UInt32, UInt32, Ptr{Cvoid}, Csize_t, Ref{Ptr{Error}}),
          pipeline, filter_index, option, value, value_size, error)
tdb_pipeline_option(pipeline, filter_index, option, value, value_size, error) =
    ccall((:tdb_pipeline_option, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, UInt32, UInt32, Ptr{Cvoid}, Csize_t, Ref{Ptr{Error}}),
          pipeline, filter_index, option, value, value_size, error)
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
tdb_pipeline_filter_cells_into(pipeline, data, size, datatype, cell_size, out, capacity, written, error) =
    ccall((:tdb_pipeline_filter_cells_into, libtdbfilter), Cint,
          (Ptr{PipelineHandle}, Ptr{UInt8}, Csize_t, UInt32, UInt64, Ptr{UInt8}, Csize_t,
           Ref{Csize_t}, Ref{Ptr{Error}}),
          pipeline, data, size, datatype, cell_size, out, capacity, written, error)
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
tdb_tile_offsets(tile, offsets, cell_count, error) =
    ccall((:tdb_tile_offsets, libtdbfilter), Cint,
          (Ptr{TileHandle}, Ref{Ptr{UInt64}}, Ref{Csize_t}, Ref{Ptr{Error}}),
          tile, offsets, cell_count, error)
tdb_tile_data(tile, data, size, error) =
    ccall((:tdb_tile_data, libtdbfilter), Cint,
          (Ptr{TileHandle}, Ref{Ptr{UInt8}}, Ref{Csize_t}, Ref{Ptr{Error}}), tile, data, size, error)
tdb_tile_free(tile) = ccall((:tdb_tile_free, libtdbfilter), Cvoid, (Ptr{TileHandle},), tile)
tdb_filtered_tile_size(bytes, size, tile_size, error) =
    ccall((:tdb_filtered_tile_size, libtdbfilter), Cint,
          (Ptr{UInt8}, Csize_t, Ref{UInt64}, Ref{Ptr{Error}}), bytes, size, tile_size, error)
# Arrays.
tdb_array_open(path, key, key_len, array, error) =
    ccall((:tdb_array_open, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, Ref{Ptr{ArrayHandle}}, Ref{Ptr{Error}}),
          path, key, key_len, array, error)
tdb_array_open_at(path, key, key_len, timestamp_start, timestamp_end, array, error) =
    ccall((:tdb_array_open_at, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, UInt64, UInt64, Ref{Ptr{ArrayHandle}}, Ref{Ptr{Error}}),
          path, key, key_len, timestamp_start, timestamp_end, array, error)
tdb_array_free(array) = ccall((:tdb_array_free, libtdbfilter), Cvoid, (Ptr{ArrayHandle},), array)
tdb_array_set_threads(array, threads, error) =
    ccall((:tdb_array_set_threads, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Ref{Ptr{Error}}), array, threads, error)
tdb_array_set_memory_limit(array, bytes, error) =
    ccall((:tdb_array_set_memory_limit, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt64, Ref{Ptr{Error}}), array, bytes, error)
tdb_array_read(array, field, subarray, subarray_size, result, error) =
    ccall((:tdb_array_read, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Cstring, Ptr{Cvoid}, Csize_t, Ref{Ptr{ResultHandle}}, Ref{Ptr{Error}}),
          array, field, subarray, subarray_size, result, error)
tdb_array_read_fields(array, fields, field_count, subarray, subarray_size, results, error) =
    ccall((:tdb_array_read_fields, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Ptr{Cstring}, Csize_t, Ptr{Cvoid}, Csize_t, Ptr{Ptr{ResultHandle}},
           Ref{Ptr{Error}}),
          array, fields, field_count, subarray, subarray_size, results, error)
tdb_result_data(result, data, size, error) =
    ccall((:tdb_result_data, libtdbfilter), Cint,
          (Ptr{ResultHandle}, Ref{Ptr{UInt8}}, Ref{Csize_t}, Ref{Ptr{Error}}), result, data, size, error)
tdb_result_offsets(result, offsets, count, error) =
    ccall((:tdb_result_offsets, libtdbfilter), Cint,
          (Ptr{ResultHandle}, Ref{Ptr{UInt64}}, Ref{Csize_t}, Ref{Ptr{Error}}), result, offsets, count, error)
tdb_result_validity(result, validity, count, error) =
    ccall((:tdb_result_validity, libtdbfilter), Cint,
          (Ptr{ResultHandle}, Ref{Ptr{UInt8}}, Ref{Csize_t}, Ref{Ptr{Error}}), result, validity, count, error)
tdb_result_cell_count(result, count, error) =
    ccall((:tdb_result_cell_count, libtdbfilter), Cint,
          (Ptr{ResultHandle}, Ref{UInt64}, Ref{Ptr{Error}}), result, count, error)
tdb_result_type(result, datatype, cell_val_num, error) =
    ccall((:tdb_result_type, libtdbfilter), Cint,
          (Ptr{ResultHandle}, Ref{UInt32}, Ref{UInt32}, Ref{Ptr{Error}}), result, datatype, cell_val_num, error)
tdb_result_free(result) = ccall((:tdb_result_free, libtdbfilter), Cvoid, (Ptr{ResultHandle},), result)
tdb_array_enumeration(array, name, values, error) =
    ccall((:tdb_array_enumeration, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Cstring, Ref{Ptr{ResultHandle}}, Ref{Ptr{Error}}), array, name, values, error)
tdb_array_metadata_count(array, count, error) =
    ccall((:tdb_array_metadata_count, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Ref{UInt32}, Ref{Ptr{Error}}), array, count, error)
tdb_array_metadata_entry(array, index, key, datatype, value_count, value, error) =
    ccall((:tdb_array_metadata_entry, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Ref{Ptr{UInt8}}, Ref{UInt32}, Ref{UInt32}, Ref{Ptr{Cvoid}}, Ref{Ptr{Error}}),
          array, index, key, datatype, value_count, value, error)
tdb_array_schema_info(array, array_type, tile_order, cell_order, capacity, allows_dups, version, error) =
    ccall((:tdb_array_schema_info, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Ref{UInt8}, Ref{UInt8}, Ref{UInt8}, Ref{UInt64}, Ref{Bool}, Ref{UInt32}, Ref{Ptr{Error}}),
          array, array_type, tile_order, cell_order, capacity, allows_dups, version, error)
tdb_array_schema_json(array, buffer, capacity, size, error) =
    ccall((:tdb_array_schema_json, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Ptr{UInt8}, Csize_t, Ref{Csize_t}, Ref{Ptr{Error}}),
          array, buffer, capacity, size, error)
tdb_array_dimension_count(array, count, error) =
    ccall((:tdb_array_dimension_count, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Ref{UInt32}, Ref{Ptr{Error}}), array, count, error)
tdb_array_attribute_count(array, count, error) =
    ccall((:tdb_array_attribute_count, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Ref{UInt32}, Ref{Ptr{Error}}), array, count, error)
tdb_array_dimension(array, index, name, datatype, cell_val_num, error) =
    ccall((:tdb_array_dimension, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Ref{Ptr{UInt8}}, Ref{UInt32}, Ref{UInt32}, Ref{Ptr{Error}}),
          array, index, name, datatype, cell_val_num, error)
tdb_array_dimension_domain(array, index, lo, hi, size, extent, error) =
    ccall((:tdb_array_dimension_domain, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Ref{Ptr{Cvoid}}, Ref{Ptr{Cvoid}}, Ref{Csize_t}, Ref{Ptr{Cvoid}}, Ref{Ptr{Error}}),
          array, index, lo, hi, size, extent, error)
tdb_array_attribute(array, index, name, datatype, cell_val_num, nullable, error) =
    ccall((:tdb_array_attribute, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Ref{Ptr{UInt8}}, Ref{UInt32}, Ref{UInt32}, Ref{Bool}, Ref{Ptr{Error}}),
          array, index, name, datatype, cell_val_num, nullable, error)
tdb_array_attribute_fill_value(array, index, value, size, validity, error) =
    ccall((:tdb_array_attribute_fill_value, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Ref{Ptr{Cvoid}}, Ref{Csize_t}, Ref{UInt8}, Ref{Ptr{Error}}),
          array, index, value, size, validity, error)
tdb_array_pipeline(array, field, kind, pipeline, error) =
    ccall((:tdb_array_pipeline, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Cstring, UInt32, Ref{Ptr{PipelineHandle}}, Ref{Ptr{Error}}),
          array, field, kind, pipeline, error)
tdb_array_fragment_count(array, count, error) =
    ccall((:tdb_array_fragment_count, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Ref{UInt32}, Ref{Ptr{Error}}), array, count, error)
tdb_array_fragment(array, index, name, timestamp_start, timestamp_end, version, dense, cell_count,
                   tile_count, error) =
    ccall((:tdb_array_fragment, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Ref{Ptr{UInt8}}, Ref{UInt64}, Ref{UInt64}, Ref{UInt32}, Ref{Bool},
           Ref{UInt64}, Ref{UInt64}, Ref{Ptr{Error}}),
          array, index, name, timestamp_start, timestamp_end, version, dense, cell_count, tile_count, error)
tdb_array_fragment_schema_name(array, index, name, error) =
    ccall((:tdb_array_fragment_schema_name, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Ref{Cstring}, Ref{Ptr{Error}}), array, index, name, error)
tdb_array_fragment_has_consolidated_metadata(array, index, has, error) =
    ccall((:tdb_array_fragment_has_consolidated_metadata, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Ref{Bool}, Ref{Ptr{Error}}), array, index, has, error)
tdb_array_fragment_non_empty_domain(array, index, dim, lo, lo_size, hi, hi_size, error) =
    ccall((:tdb_array_fragment_non_empty_domain, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, UInt32, Ref{Ptr{Cvoid}}, Ref{Csize_t}, Ref{Ptr{Cvoid}}, Ref{Csize_t},
           Ref{Ptr{Error}}),
          array, index, dim, lo, lo_size, hi, hi_size, error)
tdb_array_tile_count(array, fragment, count, error) =
    ccall((:tdb_array_tile_count, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Ref{UInt64}, Ref{Ptr{Error}}), array, fragment, count, error)
tdb_array_tile_cell_count(array, fragment, tile, count, error) =
    ccall((:tdb_array_tile_cell_count, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, UInt64, Ref{UInt64}, Ref{Ptr{Error}}),
          array, fragment, tile, count, error)
tdb_array_tile_location(array, fragment, field, tile, kind, path, capacity, path_size, offset, size,
                        error) =
    ccall((:tdb_array_tile_location, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Cstring, UInt64, UInt32, Ptr{UInt8}, Csize_t, Ref{Csize_t},
           Ref{UInt64}, Ref{UInt64}, Ref{Ptr{Error}}),
          array, fragment, field, tile, kind, path, capacity, path_size, offset, size, error)
tdb_array_tile_read(array, fragment, field, tile, result, error) =
    ccall((:tdb_array_tile_read, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, Cstring, UInt64, Ref{Ptr{ResultHandle}}, Ref{Ptr{Error}}),
          array, fragment, field, tile, result, error)
tdb_array_tile_mbr(array, fragment, tile, dim, lo, lo_size, hi, hi_size, error) =
    ccall((:tdb_array_tile_mbr, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt32, UInt64, UInt32, Ref{Ptr{Cvoid}}, Ref{Csize_t}, Ref{Ptr{Cvoid}},
           Ref{Csize_t}, Ref{Ptr{Error}}),
          array, fragment, tile, dim, lo, lo_size, hi, hi_size, error)

# Writing: array creation, array metadata, fragments (tdb_writer_t).
tdb_array_create(path, schema_json, key, key_len, error) =
    ccall((:tdb_array_create, libtdbfilter), Cint,
          (Cstring, Cstring, Ptr{Cvoid}, Csize_t, Ref{Ptr{Error}}), path, schema_json, key, key_len, error)
tdb_array_metadata_put(path, key, key_len, timestamp, name, type, value_count, value, value_size, error) =
    ccall((:tdb_array_metadata_put, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, UInt64, Cstring, UInt32, UInt32, Ptr{Cvoid}, Csize_t,
           Ref{Ptr{Error}}),
          path, key, key_len, timestamp, name, type, value_count, value, value_size, error)
tdb_array_metadata_write(path, key, key_len, timestamp, names, types, value_counts, values,
                         value_sizes, deletes, count, config, error) =
    ccall((:tdb_array_metadata_write, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, UInt64, Ptr{Cstring}, Ptr{UInt32}, Ptr{UInt32},
           Ptr{Ptr{Cvoid}}, Ptr{Csize_t}, Ptr{UInt8}, Csize_t, Ptr{ConfigHandle}, Ref{Ptr{Error}}),
          path, key, key_len, timestamp, names, types, value_counts, values, value_sizes, deletes,
          count, config, error)
tdb_array_metadata_delete(path, key, key_len, timestamp, name, error) =
    ccall((:tdb_array_metadata_delete, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, UInt64, Cstring, Ref{Ptr{Error}}),
          path, key, key_len, timestamp, name, error)
tdb_writer_open(path, key, key_len, timestamp, writer, error) =
    ccall((:tdb_writer_open, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, UInt64, Ref{Ptr{WriterHandle}}, Ref{Ptr{Error}}),
          path, key, key_len, timestamp, writer, error)
tdb_writer_free(writer) = ccall((:tdb_writer_free, libtdbfilter), Cvoid, (Ptr{WriterHandle},), writer)

# Storage configuration (object stores: S3, Azure, GCS) and the *_with_config entry points.
tdb_config_alloc(config, error) =
    ccall((:tdb_config_alloc, libtdbfilter), Cint, (Ref{Ptr{ConfigHandle}}, Ref{Ptr{Error}}),
          config, error)
tdb_config_set(config, key, value, error) =
    ccall((:tdb_config_set, libtdbfilter), Cint,
          (Ptr{ConfigHandle}, Cstring, Cstring, Ref{Ptr{Error}}), config, key, value, error)
tdb_config_free(config) = ccall((:tdb_config_free, libtdbfilter), Cvoid, (Ptr{ConfigHandle},), config)
tdb_array_open_with_config(path, key, key_len, config, array, error) =
    ccall((:tdb_array_open_with_config, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, Ptr{ConfigHandle}, Ref{Ptr{ArrayHandle}}, Ref{Ptr{Error}}),
          path, key, key_len, config, array, error)
tdb_array_open_at_with_config(path, key, key_len, timestamp_start, timestamp_end, config, array, error) =
    ccall((:tdb_array_open_at_with_config, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, UInt64, UInt64, Ptr{ConfigHandle}, Ref{Ptr{ArrayHandle}},
           Ref{Ptr{Error}}),
          path, key, key_len, timestamp_start, timestamp_end, config, array, error)
tdb_array_create_with_config(path, schema_json, key, key_len, config, error) =
    ccall((:tdb_array_create_with_config, libtdbfilter), Cint,
          (Cstring, Cstring, Ptr{Cvoid}, Csize_t, Ptr{ConfigHandle}, Ref{Ptr{Error}}),
          path, schema_json, key, key_len, config, error)
tdb_array_metadata_put_with_config(path, key, key_len, timestamp, name, type, value_count, value,
                                   value_size, config, error) =
    ccall((:tdb_array_metadata_put_with_config, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, UInt64, Cstring, UInt32, UInt32, Ptr{Cvoid}, Csize_t,
           Ptr{ConfigHandle}, Ref{Ptr{Error}}),
          path, key, key_len, timestamp, name, type, value_count, value, value_size, config, error)
tdb_array_metadata_delete_with_config(path, key, key_len, timestamp, name, config, error) =
    ccall((:tdb_array_metadata_delete_with_config, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, UInt64, Cstring, Ptr{ConfigHandle}, Ref{Ptr{Error}}),
          path, key, key_len, timestamp, name, config, error)
tdb_writer_open_with_config(path, key, key_len, timestamp, config, writer, error) =
    ccall((:tdb_writer_open_with_config, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, UInt64, Ptr{ConfigHandle}, Ref{Ptr{WriterHandle}},
           Ref{Ptr{Error}}),
          path, key, key_len, timestamp, config, writer, error)
tdb_writer_set_layout(writer, layout, error) =
    ccall((:tdb_writer_set_layout, libtdbfilter), Cint,
          (Ptr{WriterHandle}, UInt32, Ref{Ptr{Error}}), writer, layout, error)
tdb_writer_set_threads(writer, threads, error) =
    ccall((:tdb_writer_set_threads, libtdbfilter), Cint,
          (Ptr{WriterHandle}, UInt32, Ref{Ptr{Error}}), writer, threads, error)
tdb_writer_set_subarray(writer, subarray, subarray_size, error) =
    ccall((:tdb_writer_set_subarray, libtdbfilter), Cint,
          (Ptr{WriterHandle}, Ptr{Cvoid}, Csize_t, Ref{Ptr{Error}}), writer, subarray, subarray_size, error)
tdb_writer_set_data(writer, field, data, data_size, error) =
    ccall((:tdb_writer_set_data, libtdbfilter), Cint,
          (Ptr{WriterHandle}, Cstring, Ptr{Cvoid}, Csize_t, Ref{Ptr{Error}}), writer, field, data, data_size, error)
tdb_writer_set_offsets(writer, field, offsets, offset_count, error) =
    ccall((:tdb_writer_set_offsets, libtdbfilter), Cint,
          (Ptr{WriterHandle}, Cstring, Ptr{UInt64}, Csize_t, Ref{Ptr{Error}}),
          writer, field, offsets, offset_count, error)
tdb_writer_set_validity(writer, field, validity, validity_size, error) =
    ccall((:tdb_writer_set_validity, libtdbfilter), Cint,
          (Ptr{WriterHandle}, Cstring, Ptr{UInt8}, Csize_t, Ref{Ptr{Error}}),
          writer, field, validity, validity_size, error)
tdb_writer_submit(writer, error) =
    ccall((:tdb_writer_submit, libtdbfilter), Cint, (Ptr{WriterHandle}, Ref{Ptr{Error}}), writer, error)
tdb_writer_finalize(writer, error) =
    ccall((:tdb_writer_finalize, libtdbfilter), Cint, (Ptr{WriterHandle}, Ref{Ptr{Error}}), writer, error)
tdb_writer_fragment_name(writer, name, error) =
    ccall((:tdb_writer_fragment_name, libtdbfilter), Cint,
          (Ptr{WriterHandle}, Ref{Ptr{UInt8}}, Ref{Ptr{Error}}), writer, name, error)

# Names and sizes of types, status names (no handle).
tdb_datatype_size(datatype, size, error) =
    ccall((:tdb_datatype_size, libtdbfilter), Cint,
          (UInt32, Ref{UInt64}, Ref{Ptr{Error}}), datatype, size, error)
tdb_datatype_name(datatype, name, error) =
    ccall((:tdb_datatype_name, libtdbfilter), Cint,
          (UInt32, Ref{Ptr{UInt8}}, Ref{Ptr{Error}}), datatype, name, error)
tdb_datatype_from_name(name, datatype, error) =
    ccall((:tdb_datatype_from_name, libtdbfilter), Cint,
          (Cstring, Ref{UInt32}, Ref{Ptr{Error}}), name, datatype, error)
tdb_filter_type_name(type, name, error) =
    ccall((:tdb_filter_type_name, libtdbfilter), Cint,
          (UInt32, Ref{Ptr{UInt8}}, Ref{Ptr{Error}}), type, name, error)
tdb_filter_type_from_name(name, type, error) =
    ccall((:tdb_filter_type_from_name, libtdbfilter), Cint,
          (Cstring, Ref{UInt32}, Ref{Ptr{Error}}), name, type, error)
tdb_status_name(status) = ccall((:tdb_status_name, libtdbfilter), Cstring, (Int32,), status)
tdb_version() = ccall((:tdb_version, libtdbfilter), Cstring, ())

# the array lifecycle
tdb_array_consolidation_plan(array, fragment_size, buffer, capacity, size, error) =
    ccall((:tdb_array_consolidation_plan, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, UInt64, Ptr{UInt8}, Csize_t, Ref{Csize_t}, Ref{Ptr{Error}}),
          array, fragment_size, buffer, capacity, size, error)
tdb_array_consolidate(uri, mode, config, key, key_len, timestamp_start, timestamp_end,
                      fragment_names, fragment_count, error) =
    ccall((:tdb_array_consolidate, libtdbfilter), Cint,
          (Cstring, Cstring, Ptr{ConfigHandle}, Ptr{Cvoid}, Csize_t, UInt64, UInt64,
           Ptr{Cstring}, Csize_t, Ref{Ptr{Error}}),
          uri, mode, config, key, key_len, timestamp_start, timestamp_end, fragment_names,
          fragment_count, error)
tdb_array_delete_cells(uri, condition, timestamp, key, key_len, config, error) =
    ccall((:tdb_array_delete_cells, libtdbfilter), Cint,
          (Cstring, Cstring, UInt64, Ptr{Cvoid}, Csize_t, Ptr{ConfigHandle}, Ref{Ptr{Error}}),
          uri, condition, timestamp, key, key_len, config, error)
tdb_array_vacuum(uri, mode, config, error) =
    ccall((:tdb_array_vacuum, libtdbfilter), Cint,
          (Cstring, Cstring, Ptr{ConfigHandle}, Ref{Ptr{Error}}), uri, mode, config, error)
tdb_array_delete_fragments(uri, timestamp_start, timestamp_end, config, error) =
    ccall((:tdb_array_delete_fragments, libtdbfilter), Cint,
          (Cstring, UInt64, UInt64, Ptr{ConfigHandle}, Ref{Ptr{Error}}),
          uri, timestamp_start, timestamp_end, config, error)
tdb_array_delete(uri, config, error) =
    ccall((:tdb_array_delete, libtdbfilter), Cint,
          (Cstring, Ptr{ConfigHandle}, Ref{Ptr{Error}}), uri, config, error)
tdb_array_evolve(uri, changes_json, timestamp, config, error) =
    ccall((:tdb_array_evolve, libtdbfilter), Cint,
          (Cstring, Cstring, UInt64, Ptr{ConfigHandle}, Ref{Ptr{Error}}),
          uri, changes_json, timestamp, config, error)
tdb_array_upgrade_version(uri, key, key_len, timestamp, config, error) =
    ccall((:tdb_array_upgrade_version, libtdbfilter), Cint,
          (Cstring, Ptr{Cvoid}, Csize_t, UInt64, Ptr{ConfigHandle}, Ref{Ptr{Error}}),
          uri, key, key_len, timestamp, config, error)

# groups
tdb_group_create(uri, config, error) =
    ccall((:tdb_group_create, libtdbfilter), Cint,
          (Cstring, Ptr{ConfigHandle}, Ref{Ptr{Error}}), uri, config, error)
tdb_group_open(uri, timestamp, config, group, error) =
    ccall((:tdb_group_open, libtdbfilter), Cint,
          (Cstring, UInt64, Ptr{ConfigHandle}, Ref{Ptr{GroupHandle}}, Ref{Ptr{Error}}),
          uri, timestamp, config, group, error)
tdb_group_free(group) = ccall((:tdb_group_free, libtdbfilter), Cvoid, (Ptr{GroupHandle},), group)
tdb_group_member_count(group, count, error) =
    ccall((:tdb_group_member_count, libtdbfilter), Cint,
          (Ptr{GroupHandle}, Ref{UInt32}, Ref{Ptr{Error}}), group, count, error)
tdb_group_member(group, index, uri, name, type, relative, error) =
    ccall((:tdb_group_member, libtdbfilter), Cint,
          (Ptr{GroupHandle}, UInt32, Ref{Cstring}, Ref{Cstring}, Ref{UInt32}, Ref{Bool},
           Ref{Ptr{Error}}),
          group, index, uri, name, type, relative, error)
tdb_group_add_member(group, uri, relative, name, error) =
    ccall((:tdb_group_add_member, libtdbfilter), Cint,
          (Ptr{GroupHandle}, Cstring, Bool, Cstring, Ref{Ptr{Error}}),
          group, uri, relative, name, error)
tdb_group_remove_member(group, name_or_uri, error) =
    ccall((:tdb_group_remove_member, libtdbfilter), Cint,
          (Ptr{GroupHandle}, Cstring, Ref{Ptr{Error}}), group, name_or_uri, error)
tdb_group_metadata_put(group, key, type, value_count, value, value_size, error) =
    ccall((:tdb_group_metadata_put, libtdbfilter), Cint,
          (Ptr{GroupHandle}, Cstring, UInt32, UInt32, Ptr{Cvoid}, Csize_t, Ref{Ptr{Error}}),
          group, key, type, value_count, value, value_size, error)
tdb_group_metadata_delete(group, key, error) =
    ccall((:tdb_group_metadata_delete, libtdbfilter), Cint,
          (Ptr{GroupHandle}, Cstring, Ref{Ptr{Error}}), group, key, error)
tdb_group_commit(group, error) =
    ccall((:tdb_group_commit, libtdbfilter), Cint,
          (Ptr{GroupHandle}, Ref{Ptr{Error}}), group, error)
tdb_group_consolidate_metadata(uri, config, error) =
    ccall((:tdb_group_consolidate_metadata, libtdbfilter), Cint,
          (Cstring, Ptr{ConfigHandle}, Ref{Ptr{Error}}), uri, config, error)
tdb_group_vacuum_metadata(uri, config, error) =
    ccall((:tdb_group_vacuum_metadata, libtdbfilter), Cint,
          (Cstring, Ptr{ConfigHandle}, Ref{Ptr{Error}}), uri, config, error)
tdb_group_metadata_count(group, count, error) =
    ccall((:tdb_group_metadata_count, libtdbfilter), Cint,
          (Ptr{GroupHandle}, Ref{UInt32}, Ref{Ptr{Error}}), group, count, error)
tdb_group_metadata_entry(group, index, key, type, value_count, value, error) =
    ccall((:tdb_group_metadata_entry, libtdbfilter), Cint,
          (Ptr{GroupHandle}, UInt32, Ref{Cstring}, Ref{UInt32}, Ref{UInt32}, Ref{Ptr{Cvoid}},
           Ref{Ptr{Error}}),
          group, index, key, type, value_count, value, error)
tdb_group_metadata_get(group, key, type, value_count, value, error) =
    ccall((:tdb_group_metadata_get, libtdbfilter), Cint,
          (Ptr{GroupHandle}, Cstring, Ref{UInt32}, Ref{UInt32}, Ref{Ptr{Cvoid}}, Ref{Ptr{Error}}),
          group, key, type, value_count, value, error)
# Open options and queries (ABI 0.3).
tdb_options_create(options, error) =
    ccall((:tdb_options_create, libtdbfilter), Cint, (Ref{Ptr{OptionsHandle}}, Ref{Ptr{Error}}),
          options, error)
tdb_options_free(options) =
    ccall((:tdb_options_free, libtdbfilter), Cvoid, (Ptr{OptionsHandle},), options)
tdb_options_set_key(options, key, key_len, error) =
    ccall((:tdb_options_set_key, libtdbfilter), Cint,
          (Ptr{OptionsHandle}, Ptr{Cvoid}, Csize_t, Ref{Ptr{Error}}), options, key, key_len, error)
tdb_options_set_timestamps(options, start, stop, error) =
    ccall((:tdb_options_set_timestamps, libtdbfilter), Cint,
          (Ptr{OptionsHandle}, UInt64, UInt64, Ref{Ptr{Error}}), options, start, stop, error)
tdb_options_set_config(options, config, error) =
    ccall((:tdb_options_set_config, libtdbfilter), Cint,
          (Ptr{OptionsHandle}, Ptr{ConfigHandle}, Ref{Ptr{Error}}), options, config, error)
tdb_options_set_threads(options, threads, error) =
    ccall((:tdb_options_set_threads, libtdbfilter), Cint,
          (Ptr{OptionsHandle}, UInt32, Ref{Ptr{Error}}), options, threads, error)
tdb_options_set_memory_limit(options, bytes, error) =
    ccall((:tdb_options_set_memory_limit, libtdbfilter), Cint,
          (Ptr{OptionsHandle}, UInt64, Ref{Ptr{Error}}), options, bytes, error)
tdb_array_open_with_options(path, options, array, error) =
    ccall((:tdb_array_open_with_options, libtdbfilter), Cint,
          (Cstring, Ptr{OptionsHandle}, Ref{Ptr{ArrayHandle}}, Ref{Ptr{Error}}),
          path, options, array, error)
tdb_query_create(array, query, error) =
    ccall((:tdb_query_create, libtdbfilter), Cint,
          (Ptr{ArrayHandle}, Ref{Ptr{QueryHandle}}, Ref{Ptr{Error}}), array, query, error)
tdb_query_free(query) = ccall((:tdb_query_free, libtdbfilter), Cvoid, (Ptr{QueryHandle},), query)
tdb_query_set_layout(query, layout, error) =
    ccall((:tdb_query_set_layout, libtdbfilter), Cint,
          (Ptr{QueryHandle}, UInt32, Ref{Ptr{Error}}), query, layout, error)
tdb_query_add_range(query, dim_index, lo, lo_size, hi, hi_size, error) =
    ccall((:tdb_query_add_range, libtdbfilter), Cint,
          (Ptr{QueryHandle}, UInt32, Ptr{Cvoid}, Csize_t, Ptr{Cvoid}, Csize_t, Ref{Ptr{Error}}),
          query, dim_index, lo, lo_size, hi, hi_size, error)
tdb_query_set_condition(query, text, error) =
    ccall((:tdb_query_set_condition, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Cstring, Ref{Ptr{Error}}), query, text, error)
tdb_query_add_field(query, name, error) =
    ccall((:tdb_query_add_field, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Cstring, Ref{Ptr{Error}}), query, name, error)
tdb_query_add_aggregate(query, op, field, error) =
    ccall((:tdb_query_add_aggregate, libtdbfilter), Cint,
          (Ptr{QueryHandle}, UInt32, Cstring, Ref{Ptr{Error}}), query, op, field, error)
tdb_query_submit(query, results, result_count, error) =
    ccall((:tdb_query_submit, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Ptr{Ptr{ResultHandle}}, Csize_t, Ref{Ptr{Error}}),
          query, results, result_count, error)
tdb_query_aggregate_count(query, count, error) =
    ccall((:tdb_query_aggregate_count, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Ref{Csize_t}, Ref{Ptr{Error}}), query, count, error)
tdb_query_aggregate(query, index, label, datatype, value, size, valid, error) =
    ccall((:tdb_query_aggregate, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Csize_t, Ref{Ptr{UInt8}}, Ref{UInt32}, Ref{Ptr{UInt8}}, Ref{Csize_t},
           Ref{UInt8}, Ref{Ptr{Error}}),
          query, index, label, datatype, value, size, valid, error)
tdb_query_stats(query, tiles_from_metadata, tiles_decoded, tiles_pruned, bytes_decoded, error) =
    ccall((:tdb_query_stats, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Ref{UInt64}, Ref{UInt64}, Ref{UInt64}, Ref{UInt64}, Ref{Ptr{Error}}),
          query, tiles_from_metadata, tiles_decoded, tiles_pruned, bytes_decoded, error)
tdb_query_set_data_buffer(query, field, data, data_size, error) =
    ccall((:tdb_query_set_data_buffer, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Cstring, Ptr{Cvoid}, Csize_t, Ref{Ptr{Error}}),
          query, field, data, data_size, error)
tdb_query_set_offsets_buffer(query, field, offsets, offset_count, error) =
    ccall((:tdb_query_set_offsets_buffer, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Cstring, Ptr{UInt64}, Csize_t, Ref{Ptr{Error}}),
          query, field, offsets, offset_count, error)
tdb_query_set_validity_buffer(query, field, validity, validity_size, error) =
    ccall((:tdb_query_set_validity_buffer, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Cstring, Ptr{UInt8}, Csize_t, Ref{Ptr{Error}}),
          query, field, validity, validity_size, error)
tdb_query_submit_batch(query, error) =
    ccall((:tdb_query_submit_batch, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Ref{Ptr{Error}}), query, error)
tdb_query_status(query, status, error) =
    ccall((:tdb_query_status, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Ref{UInt32}, Ref{Ptr{Error}}), query, status, error)
tdb_query_result_size(query, field, cell_count, data_size, offset_count, validity_size, error) =
    ccall((:tdb_query_result_size, libtdbfilter), Cint,
          (Ptr{QueryHandle}, Cstring, Ref{UInt64}, Ref{Csize_t}, Ref{Csize_t}, Ref{Csize_t},
           Ref{Ptr{Error}}),
          query, field, cell_count, data_size, offset_count, validity_size, error)

end # module
