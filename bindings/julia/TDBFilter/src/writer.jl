# Writing TileDB arrays without libtiledb: tdb_array_create, tdb_writer_*, array metadata.

"""
    create_array(path, schema_json; key = nothing)

Creates the array `path` from `schema_json` (the JSON `tdbf array info --json` prints, whole or
its `schema` member), as TileDB 2.30 creates it. `key`: a 32-byte AES-256-GCM key to encrypt
the array with. An existing array is refused (a `TDBFilterError`) and left untouched.
"""
function create_array(path::AbstractString, schema_json::AbstractString;
                      key::Union{Nothing,AbstractVector{UInt8}} = nothing)
    k = key === nothing ? UInt8[] : Vector{UInt8}(key)
    GC.@preserve k checked(err -> L.tdb_array_create(path, schema_json, isempty(k) ? C_NULL : pointer(k),
                                                     length(k), err))
    return nothing
end

"""
    metadata_put!(path, name, values; datatype = datatype_of(eltype(values)), key = nothing, timestamp = 0)

Writes the array metadata entry `name` (replacing an earlier value): `values` a vector of
numbers (or a `String`, stored as STRING_UTF8), as one `__meta` file at `timestamp`
(milliseconds; 0: now).
"""
function metadata_put!(path::AbstractString, name::AbstractString, values::AbstractVector{T};
                       datatype::Integer = datatype_of(T), key = nothing,
                       timestamp::Integer = 0) where {T}
    v = Vector{T}(values)
    k = key === nothing ? UInt8[] : Vector{UInt8}(key)
    GC.@preserve v k checked(err -> L.tdb_array_metadata_put(
        path, isempty(k) ? C_NULL : pointer(k), length(k), timestamp, name, datatype, length(v),
        isempty(v) ? C_NULL : pointer(v), sizeof(v), err))
    return nothing
end

metadata_put!(path::AbstractString, name::AbstractString, value::AbstractString; kw...) =
    metadata_put!(path, name, Vector{UInt8}(codeunits(value)); datatype = TDB_STRING_UTF8, kw...)

"""
    metadata_delete!(path, name; key = nothing, timestamp = 0)

Deletes the array metadata entry `name` (one `__meta` file at `timestamp`; deleting a key
without a value is not an error).
"""
function metadata_delete!(path::AbstractString, name::AbstractString; key = nothing, timestamp::Integer = 0)
    k = key === nothing ? UInt8[] : Vector{UInt8}(key)
    GC.@preserve k checked(err -> L.tdb_array_metadata_delete(path, isempty(k) ? C_NULL : pointer(k),
                                                              length(k), timestamp, name, err))
    return nothing
end

"""
    TDBWriter(path; key = nothing, timestamp = 0, layout = nothing, threads = 0)

A writer of one fragment of the array `path` at `timestamp` (milliseconds; 0: now). Set a
batch of buffers per field (`set_data!`, `set_offsets!`, `set_validity!`, or `set_strings!`),
`submit!` it, then `finalize!` commits the fragment and returns its name. `close(w)` (or, as a
backstop, its finalizer) frees it and never commits. The buffers are not copied: the writer
holds them (a GC root) until the next `submit!` returns. Julia arrays are column-major: a
`Matrix` whose axes are the dimensions in order is written as is with `layout =
TDB_COL_MAJOR`.

```julia
w = TDBWriter("my_array"; layout = TDB_COL_MAJOR)
set_subarray!(w, [(Int32(1), Int32(4)), (Int32(1), Int32(3))])
set_data!(w, "a", reshape(Int32.(1:12), 4, 3))
submit!(w); name = finalize!(w); close(w)
```
"""
mutable struct TDBWriter
    handle::Ptr{Cvoid}
    roots::Vector{Any} # the buffers of the batch being set, alive until submit! returns
    function TDBWriter(path::AbstractString; key::Union{Nothing,AbstractVector{UInt8}} = nothing,
                       timestamp::Integer = 0, layout = nothing, threads::Integer = 0)
        out = Ref{Ptr{Cvoid}}(C_NULL)
        k = key === nothing ? UInt8[] : Vector{UInt8}(key)
        GC.@preserve k checked(err -> L.tdb_writer_open(path, isempty(k) ? C_NULL : pointer(k), length(k),
                                                        timestamp, out, err))
        w = new(out[], Any[])
        finalizer(close, w)
        layout === nothing || checked(err -> L.tdb_writer_set_layout(w.handle, layout, err))
        threads != 0 && checked(err -> L.tdb_writer_set_threads(w.handle, threads, err))
        return w
    end
end

"""Frees the writer (idempotent); nothing is committed without a successful `finalize!`."""
function Base.close(w::TDBWriter)
    if w.handle != C_NULL
        L.tdb_writer_free(w.handle)
        w.handle = C_NULL
    end
    empty!(w.roots)
    return nothing
end

function handle(w::TDBWriter)
    w.handle == C_NULL && throw(ArgumentError("the writer is closed"))
    return w.handle
end

"""Sets the order of the cells given (`TDB_ROW_MAJOR`, `TDB_COL_MAJOR`, `TDB_GLOBAL_ORDER`,
`TDB_UNORDERED`), before the first `submit!`."""
set_layout!(w::TDBWriter, layout::Integer) = checked(err -> L.tdb_writer_set_layout(handle(w), layout, err))

"""Sets the box of a dense write: an inclusive `(lo, hi)` per dimension, each of the
dimension's Julia type (`Int32` for INT32, `Int64` for INT64 and datetimes…)."""
function set_subarray!(w::TDBWriter, box::AbstractVector{<:Tuple})
    packed = UInt8[]
    for (lo, hi) in box
        typeof(lo) == typeof(hi) || throw(ArgumentError("bounds $lo and $hi differ in type"))
        append!(packed, reinterpret(UInt8, [lo, hi]))
    end
    GC.@preserve packed checked(err -> L.tdb_writer_set_subarray(handle(w), pointer(packed), length(packed), err))
    return nothing
end

# A valid address for empty buffers (the library refuses NULL data).
const EMPTY = UInt8[0]

"""Sets the cells of `field` (an attribute, or a sparse array's dimension) for the next
`submit!`: fixed-size values (any dense array of isbits values, in memory order), or the
concatenated values of var-size cells (with `set_offsets!`). Not copied."""
function set_data!(w::TDBWriter, field::AbstractString, data::DenseArray{T}) where {T}
    isbitstype(T) || throw(ArgumentError("set_data!: $T cells are not plain bits"))
    buf = isempty(data) ? EMPTY : data
    push!(w.roots, buf)
    checked(err -> L.tdb_writer_set_data(handle(w), field, pointer(buf), sizeof(data), err))
    return nothing
end

"""Sets the start of each var-size cell of `field` in its data, in bytes (one per cell)."""
function set_offsets!(w::TDBWriter, field::AbstractString, offsets::Vector{UInt64})
    buf = isempty(offsets) ? UInt64[0] : offsets
    push!(w.roots, buf)
    checked(err -> L.tdb_writer_set_offsets(handle(w), field, pointer(buf), length(offsets), err))
    return nothing
end

"""Sets the validity of nullable `field`: one byte per cell, 0 for null."""
function set_validity!(w::TDBWriter, field::AbstractString, validity::Vector{UInt8})
    buf = isempty(validity) ? EMPTY : validity
    push!(w.roots, buf)
    checked(err -> L.tdb_writer_set_validity(handle(w), field, pointer(buf), length(validity), err))
    return nothing
end

"""Sets var-size text cells of `field` (data and offsets; `missing` cells are null, with
their validity set, for nullable fields)."""
function set_strings!(w::TDBWriter, field::AbstractString, cells::AbstractVector)
    data = UInt8[]
    offsets = Vector{UInt64}(undef, length(cells))
    validity = Vector{UInt8}(undef, length(cells))
    for (i, s) in enumerate(cells)
        offsets[i] = length(data)
        validity[i] = ismissing(s) ? 0x00 : 0x01
        ismissing(s) || append!(data, codeunits(String(s)))
    end
    set_data!(w, field, data)
    set_offsets!(w, field, offsets)
    any(==(0x00), validity) && set_validity!(w, field, validity)
    return nothing
end

"""Writes the batch set since the last `submit!`; then releases its buffers. A failure
(wrong sizes, coordinates outside the domain, a missing field…) fails the writer."""
function submit!(w::TDBWriter)
    try
        checked(err -> L.tdb_writer_submit(handle(w), err))
    finally
        empty!(w.roots)
    end
    return nothing
end

"""Commits the fragment and returns its name (`__<t>_<t>_<label>_22`)."""
function finalize!(w::TDBWriter)
    checked(err -> L.tdb_writer_finalize(handle(w), err))
    name = Ref{Ptr{UInt8}}(C_NULL)
    checked(err -> L.tdb_writer_fragment_name(handle(w), name, err))
    return unsafe_string(name[])
end

"""The R-tree leaf of `tile` of sparse fragment `fragment` on dimension `dim` (0-based
indices): its `(lo, hi)` bytes."""
function tile_mbr(a::TDBArray, fragment::Integer, tile::Integer, dim::Integer)
    lo, lo_n, hi, hi_n = Ref{Ptr{Cvoid}}(C_NULL), Ref{Csize_t}(0), Ref{Ptr{Cvoid}}(C_NULL), Ref{Csize_t}(0)
    checked(err -> L.tdb_array_tile_mbr(handle(a), fragment, tile, dim, lo, lo_n, hi, hi_n, err))
    return (copy(unsafe_wrap(Array, Ptr{UInt8}(lo[]), lo_n[])), copy(unsafe_wrap(Array, Ptr{UInt8}(hi[]), hi_n[])))
end
