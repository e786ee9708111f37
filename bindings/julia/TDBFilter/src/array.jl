# Reading TileDB array folders without libtiledb (tdb_array_* of the C API).

"""
    TDBArray(path; key = nothing, timestamp = nothing, threads = 0, memory_limit = 0)

A TileDB array folder opened for reading, as TileDB 2.30 opens it. `key`: the 32-byte
AES-256-GCM key of an encrypted array; `timestamp`: `end` or `(start, end)` in milliseconds
to time-travel; `threads`: threads decoding tiles (0: all cores); `memory_limit`: the most
bytes one field's result may take (0: no limit; set it for untrusted arrays). Freed by
`close(a)` or, as a backstop, by its finalizer.

```julia
a = TDBArray("my_array")
v = read(a, "a")                         # Vector of the cells (dense: row-major box)
cols = read(a, ["x", "y"], [(0, 9), (0, 9)])   # Dict of fields over a subarray
close(a)
```
"""
mutable struct TDBArray
    handle::Ptr{Cvoid}
    function TDBArray(path::AbstractString; key::Union{Nothing,AbstractVector{UInt8}} = nothing,
                      timestamp = nothing, threads::Integer = 0, memory_limit::Integer = 0)
        out = Ref{Ptr{Cvoid}}(C_NULL)
        k = key === nothing ? UInt8[] : Vector{UInt8}(key)
        GC.@preserve k begin
            kp = isempty(k) ? C_NULL : pointer(k)
            if timestamp === nothing
                checked(err -> L.tdb_array_open(path, kp, length(k), out, err))
            else
                start, stop = timestamp isa Tuple ? timestamp : (0, timestamp)
                checked(err -> L.tdb_array_open_at(path, kp, length(k), start, stop, out, err))
            end
        end
        a = new(out[])
        finalizer(close, a)
        threads != 0 && checked(err -> L.tdb_array_set_threads(a.handle, threads, err))
        memory_limit != 0 && checked(err -> L.tdb_array_set_memory_limit(a.handle, memory_limit, err))
        return a
    end
end

"""Frees the array's C handle (idempotent)."""
function Base.close(a::TDBArray)
    if a.handle != C_NULL
        L.tdb_array_free(a.handle)
        a.handle = C_NULL
    end
    return nothing
end

function handle(a::TDBArray)
    a.handle == C_NULL && throw(ArgumentError("the array is closed"))
    return a.handle
end

"""A dimension or attribute: name, TileDB datatype, cell_val_num (`typemax(UInt32)`: var-size)
and nullability."""
struct ArrayField
    name::String
    datatype::UInt32
    cell_val_num::UInt32
    nullable::Bool
end

"""The dimensions and the attributes of the array's schema."""
function fields(a::TDBArray)
    nd, na = Ref{UInt32}(0), Ref{UInt32}(0)
    checked(err -> L.tdb_array_dimension_count(handle(a), nd, err))
    checked(err -> L.tdb_array_attribute_count(handle(a), na, err))
    name, dt, cvn, nullable = Ref{Ptr{UInt8}}(C_NULL), Ref{UInt32}(0), Ref{UInt32}(0), Ref{Bool}(false)
    dims = ArrayField[]
    for i in 0:Int(nd[])-1
        checked(err -> L.tdb_array_dimension(handle(a), i, name, dt, cvn, err))
        push!(dims, ArrayField(unsafe_string(name[]), dt[], cvn[], false))
    end
    attrs = ArrayField[]
    for i in 0:Int(na[])-1
        checked(err -> L.tdb_array_attribute(handle(a), i, name, dt, cvn, nullable, err))
        push!(attrs, ArrayField(unsafe_string(name[]), dt[], cvn[], nullable[]))
    end
    return dims, attrs
end

"""The array metadata: key => (datatype, raw little-endian bytes of the values)."""
function metadata(a::TDBArray)
    n = Ref{UInt32}(0)
    checked(err -> L.tdb_array_metadata_count(handle(a), n, err))
    out = Dict{String,Tuple{UInt32,Vector{UInt8}}}()
    key, dt, num, value = Ref{Ptr{UInt8}}(C_NULL), Ref{UInt32}(0), Ref{UInt32}(0), Ref{Ptr{Cvoid}}(C_NULL)
    for i in 0:Int(n[])-1
        checked(err -> L.tdb_array_metadata_entry(handle(a), i, key, dt, num, value, err))
        size = Int(num[]) * datatype_size(dt[])
        bytes = size == 0 ? UInt8[] : copy(unsafe_wrap(Array, Ptr{UInt8}(value[]), size))
        out[unsafe_string(key[])] = (dt[], bytes)
    end
    return out
end

# Julia element types of TileDB datatypes (strings and blobs: bytes).
const JULIA_TYPES = Dict{UInt32,DataType}(
    TDB_INT32 => Int32, TDB_INT64 => Int64, TDB_FLOAT32 => Float32, TDB_FLOAT64 => Float64,
    TDB_INT8 => Int8, TDB_UINT8 => UInt8, TDB_INT16 => Int16, TDB_UINT16 => UInt16,
    TDB_UINT32 => UInt32, TDB_UINT64 => UInt64, TDB_BOOL => Bool)
const TEXT_TYPES = (TDB_CHAR, TDB_STRING_ASCII, TDB_STRING_UTF8)

"""
Converts a C result into Julia values and frees it: a `Vector{T}` of fixed cells (a matrix of
`cell_val_num` rows for multi-value cells), `Vector{String}` of var-size text, or
`Vector{Vector{UInt8}}` of other var cells; nullable fields as `Vector{Union{Missing,T}}`.
"""
function take_result(r::Ptr{Cvoid})
    try
        data, size = Ref{Ptr{UInt8}}(C_NULL), Ref{Csize_t}(0)
        checked(err -> L.tdb_result_data(r, data, size, err))
        n, dt, cvn = Ref{UInt64}(0), Ref{UInt32}(0), Ref{UInt32}(0)
        checked(err -> L.tdb_result_cell_count(r, n, err))
        checked(err -> L.tdb_result_type(r, dt, cvn, err))
        raw = size[] == 0 ? UInt8[] : copy(unsafe_wrap(Array, data[], size[]))
        vp, vn = Ref{Ptr{UInt8}}(C_NULL), Ref{Csize_t}(0)
        checked(err -> L.tdb_result_validity(r, vp, vn, err))
        validity = vp[] == C_NULL ? nothing : copy(unsafe_wrap(Array, vp[], vn[]))
        values = if cvn[] == typemax(UInt32)
            op, on = Ref{Ptr{UInt64}}(C_NULL), Ref{Csize_t}(0)
            checked(err -> L.tdb_result_offsets(r, op, on, err))
            offsets = on[] == 0 ? UInt64[] : copy(unsafe_wrap(Array, op[], on[]))
            ends = vcat(offsets[2:end], UInt64(length(raw)))
            cells = [raw[Int(s)+1:Int(e)] for (s, e) in zip(offsets, ends)]
            dt[] in TEXT_TYPES ? String.(cells) : cells
        elseif haskey(JULIA_TYPES, dt[])
            v = collect(reinterpret(JULIA_TYPES[dt[]], raw))
            cvn[] > 1 ? reshape(v, Int(cvn[]), :) : v
        else
            raw
        end
        if validity !== nothing && values isa AbstractVector
            values = Union{Missing,eltype(values)}[validity[i] == 0 ? missing : values[i]
                                                   for i in eachindex(values)]
        end
        return values
    finally
        L.tdb_result_free(r)
    end
end

"""
    read(a::TDBArray, field::AbstractString, subarray = nothing)
    read(a::TDBArray, fields::AbstractVector{<:AbstractString}, subarray = nothing)

Reads one field (its cells) or several in one pass (a `Dict`). `subarray`: an inclusive
`(lo, hi)` per numeric dimension, or `nothing` for the non-empty domain. Dense arrays give
the box's cells in row-major order with fill values where nothing was written; sparse arrays
the visible cells in global order.
"""
Base.read(a::TDBArray, field::AbstractString, subarray = nothing) =
    read(a, [String(field)], subarray)[String(field)]

function Base.read(a::TDBArray, names::AbstractVector{<:AbstractString}, subarray = nothing)
    sub = UInt8[]
    if subarray !== nothing
        dims, _ = fields(a)
        length(subarray) == length(dims) ||
            throw(ArgumentError("$(length(subarray)) ranges for $(length(dims)) dimensions"))
        for (d, (lo, hi)) in zip(dims, subarray)
            T = get(JULIA_TYPES, d.datatype, nothing)
            T === nothing && throw(ArgumentError(
                "dimension $(d.name) ($(datatype_name(d.datatype))): subarrays need numeric dimensions"))
            append!(sub, reinterpret(UInt8, T[lo, hi]))
        end
    end
    results = fill(C_NULL, length(names))
    strs = [Base.cconvert(Cstring, String(n)) for n in names]
    GC.@preserve strs sub results begin
        cnames = [Base.unsafe_convert(Cstring, s) for s in strs]
        GC.@preserve cnames checked(err -> L.tdb_array_read_fields(handle(a), pointer(cnames), length(names),
                                                                    isempty(sub) ? C_NULL : pointer(sub),
                                                                    length(sub), pointer(results), err))
    end
    out = Dict{String,Any}()
    for (n, r) in zip(names, results)
        out[String(n)] = take_result(r)
    end
    return out
end

"""The values of enumeration `name` (the attribute's cells are indices into them)."""
function enumeration(a::TDBArray, name::AbstractString)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    checked(err -> L.tdb_array_enumeration(handle(a), name, out, err))
    return take_result(out[])
end
