"""
    TDBFilter

TileDB's tile format and filter pipeline (byte-compatible with TileDB 2.30) from Julia, over
tdbfilter's C library.

```julia
using TDBFilter
p = Pipeline("bitshuffle,zstd:3")
bytes = filter(p, collect(Int64, 1:100_000))   # TileDB's filtered tile
cells = unfilter(p, bytes, Int64)               # Vector{Int64}
close(p)                                        # or leave it to the finalizer
```

Errors are thrown as [`TDBFilterError`](@ref) carrying the library's [`Status`](@ref) and
message. Set `ENV["TDBFILTER_LIBRARY"]` to the library's path before the package is
precompiled to use a library outside the loader's search path.
"""
module TDBFilter

include("LibTDBFilter.jl")
using .LibTDBFilter
const L = LibTDBFilter

include("constants.jl")

export Pipeline, TDBFilterError, Status, unfilter, filter_var, unfilter_var,
       serialize, deserialize, spec, set_threads!, set_max_chunk_size!, set_memory_limit!, set_format_version!, set_encryption_key!,
       set_level!, level, filter_types, generic_tile_write, generic_tile_read, datatype_of,
       datatype_name, datatype_from_name, datatype_size, filter_type_name, filter_type_from_name,
       status_name,
       TDBArray, ArrayField, fields, metadata, enumeration,
       create_array, metadata_put!, metadata_delete!, TDBWriter, set_layout!, set_subarray!,
       set_data!, set_offsets!, set_validity!, set_strings!, submit!, finalize!, tile_mbr

"""
    TDBFilterError(status, message)

A failed tdbfilter call: `status` is the C API's [`Status`](@ref) (for example
`TDB_ERR_CHECKSUM_MISMATCH`), `message` the library's description naming what failed.
"""
struct TDBFilterError <: Exception
    status::Status
    message::String
end

Base.showerror(io::IO, e::TDBFilterError) =
    print(io, "TDBFilterError(", e.status, "): ", e.message)

"""Calls `f(errref)`; on a non-OK status throws `TDBFilterError` with the library's message."""
function checked(f)
    err = Ref{Ptr{Cvoid}}(C_NULL)
    status = f(err)
    if status != Cint(TDB_OK)
        message = err[] == C_NULL ? "tdbfilter call failed" : unsafe_string(L.tdb_error_message(err[]))
        L.tdb_error_free(err[])
        throw(TDBFilterError(Status(status), message))
    end
    return nothing
end

"""
    datatype_of(T)

The TileDB datatype number of the isbits type `T` (`Int8`…`UInt64`, `Float32`, `Float64`,
`Bool`, `Char` as UTF-32 is not a TileDB cell type and is refused).
"""
datatype_of(::Type{Int8}) = TDB_INT8
datatype_of(::Type{UInt8}) = TDB_UINT8
datatype_of(::Type{Int16}) = TDB_INT16
datatype_of(::Type{UInt16}) = TDB_UINT16
datatype_of(::Type{Int32}) = TDB_INT32
datatype_of(::Type{UInt32}) = TDB_UINT32
datatype_of(::Type{Int64}) = TDB_INT64
datatype_of(::Type{UInt64}) = TDB_UINT64
datatype_of(::Type{Float32}) = TDB_FLOAT32
datatype_of(::Type{Float64}) = TDB_FLOAT64
datatype_of(::Type{Bool}) = TDB_BOOL
datatype_of(::Type{T}) where {T} =
    throw(ArgumentError("no TileDB datatype for $T; pass the datatype number explicitly"))

"""
    Pipeline(spec::AbstractString = "none")

A filter pipeline, from a spec such as `"bitshuffle,zstd:3"` or `"gzip:level=9,checksum_md5"`
(the grammar of `tdbf --filters`). Freed by `close(p)` or, as a backstop, by its finalizer.
"""
mutable struct Pipeline
    handle::Ptr{Cvoid}
    function Pipeline(handle::Ptr{Cvoid})
        p = new(handle)
        finalizer(close, p)
        return p
    end
end

function Pipeline(spec::AbstractString = "none")
    out = Ref{Ptr{Cvoid}}(C_NULL)
    checked(err -> L.tdb_pipeline_from_spec(spec, out, err))
    return Pipeline(out[])
end

"""Frees the pipeline's C handle (idempotent)."""
function Base.close(p::Pipeline)
    if p.handle != C_NULL
        L.tdb_pipeline_free(p.handle)
        p.handle = C_NULL
    end
    return nothing
end

function handle(p::Pipeline)
    p.handle == C_NULL && throw(ArgumentError("the pipeline is closed"))
    return p.handle
end

"""The pipeline's spec string (parses back to the same pipeline)."""
function spec(p::Pipeline)
    n = Ref{Csize_t}(0)
    status = L.tdb_pipeline_to_spec(handle(p), C_NULL, 0, n, C_NULL)
    status == Cint(TDB_ERR_BUFFER_TOO_SMALL) || checked(err -> status)
    buf = Vector{UInt8}(undef, n[])
    checked(err -> L.tdb_pipeline_to_spec(handle(p), buf, length(buf), n, err))
    return String(buf[1:end-1])
end

Base.show(io::IO, p::Pipeline) =
    print(io, "Pipeline(", p.handle == C_NULL ? "closed" : repr(spec(p)), ")")

"""The filter types of the pipeline, in order (TileDB's numbers)."""
function filter_types(p::Pipeline)
    count = Ref{UInt32}(0)
    checked(err -> L.tdb_pipeline_filter_count(handle(p), count, err))
    types = UInt32[]
    for i in 0:Int(count[])-1
        t = Ref{UInt32}(0)
        checked(err -> L.tdb_pipeline_filter_type(handle(p), i, t, err))
        push!(types, t[])
    end
    return types
end

"""Sets the compression level of filter `index` (0-based, as in the C API)."""
function set_level!(p::Pipeline, index::Integer, lvl::Integer)
    v = Ref{Int32}(lvl)
    checked(err -> L.tdb_pipeline_set_option(handle(p), index, TDB_COMPRESSION_LEVEL, v,
                                             sizeof(Int32), err))
    return p
end

"""The compression level of filter `index` (0-based)."""
function level(p::Pipeline, index::Integer)
    v = Ref{Int32}(0)
    checked(err -> L.tdb_pipeline_option(handle(p), index, TDB_COMPRESSION_LEVEL, v, sizeof(Int32),
                                         err))
    return v[]
end

"""Threads per tile (0 = all cores)."""
function set_threads!(p::Pipeline, n::Integer)
    checked(err -> L.tdb_pipeline_set_threads(handle(p), n, err))
    return p
end

"""TileDB's maximum chunk size in bytes (0: the whole tile is one chunk)."""
function set_max_chunk_size!(p::Pipeline, n::Integer)
    checked(err -> L.tdb_pipeline_set_max_chunk_size(handle(p), n, err))
    return p
end

"""Limits the output one `unfilter` may allocate to `bytes` (0: no limit)."""
function set_memory_limit!(p::Pipeline, bytes::Integer)
    checked(err -> L.tdb_pipeline_set_memory_limit(handle(p), bytes, err))
    return p
end

"""
    set_format_version!(p, version)

Reads (and writes) tiles with the per-stage datatype rules of TileDB format `version` (22 for
TileDB 2.30; older arrays' fragments carry theirs).
"""
function set_format_version!(p::Pipeline, version::Integer)
    checked(err -> L.tdb_pipeline_set_format_version(handle(p), version, err))
    return p
end

"""Sets a 32-byte AES-256-GCM key: tiles are encrypted on filter and decrypted on unfilter."""
function set_encryption_key!(p::Pipeline, key::AbstractVector{UInt8})
    k = Vector{UInt8}(key)
    checked(err -> L.tdb_pipeline_set_encryption_key(handle(p), k, length(k), err))
    return p
end

"""TileDB's serialized pipeline bytes (as stored in array schemas)."""
function serialize(p::Pipeline)
    n = Ref{Csize_t}(0)
    L.tdb_pipeline_serialize(handle(p), C_NULL, 0, n, C_NULL)
    buf = Vector{UInt8}(undef, n[])
    checked(err -> L.tdb_pipeline_serialize(handle(p), buf, length(buf), n, err))
    return buf
end

"""Parses TileDB's serialized pipeline bytes of `format_version` (22 for TileDB 2.30)."""
function deserialize(bytes::AbstractVector{UInt8}, format_version::Integer = TDB_FORMAT_VERSION)
    b = Vector{UInt8}(bytes)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    checked(err -> L.tdb_pipeline_deserialize(b, length(b), format_version, out, err))
    return Pipeline(out[])
end

"""Copies a library tile's bytes into a Vector{UInt8} and frees the tile."""
function take_tile!(tile::Ptr{Cvoid})
    try
        data = Ref{Ptr{UInt8}}(C_NULL)
        n = Ref{Csize_t}(0)
        checked(err -> L.tdb_tile_data(tile, data, n, err))
        return n[] == 0 ? UInt8[] : copy(unsafe_wrap(Array, data[], n[]))
    finally
        L.tdb_tile_free(tile)
    end
end

function new_tile(dt::UInt32, cell_size::Integer, v::AbstractVector)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve v checked(err -> L.tdb_tile_create(dt, cell_size, pointer(v), sizeof(v), out, err))
    return out[]
end

"""
    filter(p::Pipeline, cells::Vector{T}; datatype = datatype_of(T), cell_size = sizeof(T))

Filters the cells into TileDB's filtered tile bytes (a method of `Base.filter` for pipelines).
"""
function Base.filter(p::Pipeline, cells::Vector{T}; datatype::Integer = datatype_of(T),
                cell_size::Integer = sizeof(T)) where {T}
    isbitstype(T) || throw(ArgumentError("cells must be an isbits type, not $T"))
    tile = new_tile(UInt32(datatype), cell_size, cells)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    try
        checked(err -> L.tdb_pipeline_filter(handle(p), tile, out, err))
    finally
        L.tdb_tile_free(tile)
    end
    return take_tile!(out[])
end

"""
    unfilter(p, bytes, T; datatype = datatype_of(T), cell_size = sizeof(T)) -> Vector{T}

Unfilters TileDB's filtered tile bytes (exactly one tile) into cells of type `T`.
"""
function unfilter(p::Pipeline, bytes::AbstractVector{UInt8}, ::Type{T};
                  datatype::Integer = datatype_of(T), cell_size::Integer = sizeof(T)) where {T}
    b = Vector{UInt8}(bytes)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    checked(err -> L.tdb_pipeline_unfilter(handle(p), b, length(b), datatype, cell_size, out, err))
    raw = take_tile!(out[])
    return copy(reinterpret(T, raw))
end

"""
    filter_var(data_pipeline, offsets_pipeline, strings; datatype = TDB_STRING_UTF8)
        -> (filtered_offsets, filtered_data)

Filters a var-size tile of strings (TileDB's offsets tile and data tile).
"""
function filter_var(dp::Pipeline, op::Pipeline, strings::AbstractVector{<:AbstractString};
                    datatype::Integer = TDB_STRING_UTF8)
    data = UInt8[]
    offsets = UInt64[]
    for s in strings
        push!(offsets, length(data))
        append!(data, codeunits(s))
    end
    tile = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve data offsets checked(err -> L.tdb_tile_create_var(datatype, offsets,
        length(offsets), data, length(data), tile, err))
    fo = Ref{Ptr{Cvoid}}(C_NULL)
    fd = Ref{Ptr{Cvoid}}(C_NULL)
    try
        checked(err -> L.tdb_pipeline_filter_var(handle(dp), handle(op), tile[], fo, fd, err))
    finally
        L.tdb_tile_free(tile[])
    end
    return take_tile!(fo[]), take_tile!(fd[])
end

"""
    unfilter_var(data_pipeline, offsets_pipeline, filtered_offsets, filtered_data;
                 datatype = TDB_STRING_UTF8) -> Vector{String}
"""
function unfilter_var(dp::Pipeline, op::Pipeline, fo::AbstractVector{UInt8},
                      fd::AbstractVector{UInt8}; datatype::Integer = TDB_STRING_UTF8)
    o = Vector{UInt8}(fo)
    d = Vector{UInt8}(fd)
    tile = Ref{Ptr{Cvoid}}(C_NULL)
    checked(err -> L.tdb_pipeline_unfilter_var(handle(dp), handle(op), o, length(o), d,
                                               length(d), datatype, tile, err))
    try
        offs = Ref{Ptr{UInt64}}(C_NULL)
        n = Ref{Csize_t}(0)
        checked(err -> L.tdb_tile_offsets(tile[], offs, n, err))
        data = Ref{Ptr{UInt8}}(C_NULL)
        size = Ref{Csize_t}(0)
        checked(err -> L.tdb_tile_data(tile[], data, size, err))
        offsets = n[] == 0 ? UInt64[] : copy(unsafe_wrap(Array, offs[], n[]))
        bytes = size[] == 0 ? UInt8[] : copy(unsafe_wrap(Array, data[], size[]))
        ends = vcat(offsets[2:end], UInt64(length(bytes)))
        return [String(bytes[offsets[i]+1:ends[i]]) for i in eachindex(offsets)]
    finally
        L.tdb_tile_free(tile[])
    end
end

"""Writes `payload` as a TileDB generic tile (array schemas, fragment metadata) with `p`."""
function generic_tile_write(p::Pipeline, payload::AbstractVector{UInt8})
    tile = new_tile(TDB_CHAR, 1, Vector{UInt8}(payload))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    try
        checked(err -> L.tdb_generic_tile_write(handle(p), tile, out, err))
    finally
        L.tdb_tile_free(tile)
    end
    return take_tile!(out[])
end

"""Reads a generic tile (optionally AES-256-GCM encrypted): `(payload, bytes_consumed)`."""
function generic_tile_read(bytes::AbstractVector{UInt8}; key::AbstractVector{UInt8} = UInt8[])
    b = Vector{UInt8}(bytes)
    k = Vector{UInt8}(key)
    tile = Ref{Ptr{Cvoid}}(C_NULL)
    consumed = Ref{UInt64}(0)
    checked(err -> L.tdb_generic_tile_read(b, length(b), isempty(k) ? C_NULL : pointer(k),
                                           length(k), tile, consumed, err))
    return take_tile!(tile[]), Int(consumed[])
end

"""
    datatype_name(datatype) -> String

The library's lower-case name of a TileDB datatype number (`"int32"`, `"string_utf8"`, …).
"""
function datatype_name(datatype::Integer)
    name = Ref{Ptr{UInt8}}(C_NULL)
    checked(err -> L.tdb_datatype_name(datatype, name, err))
    return unsafe_string(name[])
end

"""
    datatype_from_name(name) -> UInt32

The datatype number of `name`, case-insensitively (`"int64"`, `"INT64"`, `"TILEDB_INT64"`).
"""
function datatype_from_name(name::AbstractString)
    dt = Ref{UInt32}(0)
    checked(err -> L.tdb_datatype_from_name(name, dt, err))
    return dt[]
end

"""The bytes of one value of a TileDB datatype (TileDB's `tiledb_datatype_size`)."""
function datatype_size(datatype::Integer)
    size = Ref{UInt64}(0)
    checked(err -> L.tdb_datatype_size(datatype, size, err))
    return Int(size[])
end

"""The spec name of a TileDB filter type number (`"gzip"`, `"dictionary"`, …)."""
function filter_type_name(type::Integer)
    name = Ref{Ptr{UInt8}}(C_NULL)
    checked(err -> L.tdb_filter_type_name(type, name, err))
    return unsafe_string(name[])
end

"""
    filter_type_from_name(name) -> UInt32

The filter type number of `name`, case-insensitively (`"zstd"`, `"DICTIONARY_ENCODING"`,
`"TILEDB_FILTER_GZIP"`).
"""
function filter_type_from_name(name::AbstractString)
    t = Ref{UInt32}(0)
    checked(err -> L.tdb_filter_type_from_name(name, t, err))
    return t[]
end

"""The name of a status code (`"TDB_ERR_CORRUPT_DATA"`; `"TDB_ERR_UNKNOWN"` for other values)."""
status_name(status::Integer) = unsafe_string(L.tdb_status_name(Int32(status)))

"""The library's version string."""
version() = unsafe_string(L.tdb_version())

include("array.jl")
include("writer.jl")

end # module
