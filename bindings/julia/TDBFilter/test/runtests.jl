# Runs with Julia and an installed tdbfilter (not executed in this project's CI, which has no
# Julia; there bindings/julia/check_ccalls.py checks every ccall against the header).
using Test
using TDBFilter

@testset "TDBFilter" begin
    @test !isempty(TDBFilter.version())

    cells = collect(Int64, 1:100_000)
    for s in ("none", "bitshuffle,zstd:3", "byteshuffle,lz4", "delta,gzip:9", "zstd,checksum_md5")
        p = Pipeline(s)
        bytes = filter(p, cells)
        @test unfilter(p, bytes, Int64) == cells
        @test deserialize(serialize(p)) isa Pipeline
        @test Pipeline(spec(p)) |> serialize == serialize(p)
        close(p)
        close(p) # idempotent
    end

    p = Pipeline("bitshuffle,zstd:3")
    @test filter_types(p) == [TDBFilter.TDB_FILTER_BITSHUFFLE, TDBFilter.TDB_FILTER_ZSTD]
    @test level(p, 1) == 3
    floats = rand(Float64, 10_000)
    @test unfilter(p, filter(p, floats), Float64) == floats

    # Errors carry the status and the library's message.
    e = try Pipeline("nosuchfilter"); nothing catch e; e end
    @test e isa TDBFilterError && e.status == TDBFilter.TDB_ERR_INVALID_ARGUMENT
    @test occursin("nosuchfilter", e.message)

    q = Pipeline("zstd,checksum_sha256")
    bytes = filter(q, cells)
    bytes[end ÷ 2] ⊻= 0x01
    e = try unfilter(q, bytes, Int64); nothing catch e; e end
    @test e isa TDBFilterError &&
          e.status in (TDBFilter.TDB_ERR_CHECKSUM_MISMATCH, TDBFilter.TDB_ERR_CORRUPT_DATA)

    # Var-size strings.
    dp = Pipeline("zstd")
    op = Pipeline("double_delta,zstd")
    strs = ["a", "", "tile", "ünïcode", "x"^1000]
    fo, fd = filter_var(dp, op, strs)
    @test unfilter_var(dp, op, fo, fd) == strs

    # Encryption.
    k = Pipeline("zstd")
    set_encryption_key!(k, fill(UInt8(7), 32))
    enc = filter(k, cells)
    @test unfilter(k, enc, Int64) == cells
    wrong = Pipeline("zstd")
    set_encryption_key!(wrong, fill(UInt8(8), 32))
    e = try unfilter(wrong, enc, Int64); nothing catch e; e end
    @test e isa TDBFilterError && e.status == TDBFilter.TDB_ERR_DECRYPTION_FAILED

    # Generic tiles.
    g = generic_tile_write(Pipeline("zstd"), Vector{UInt8}("a schema"))
    payload, consumed = generic_tile_read(g)
    @test String(payload) == "a schema" && consumed == length(g)

    # The library names its types.
    @test datatype_name(TDBFilter.TDB_INT64) == "int64"
    @test datatype_from_name("TILEDB_STRING_UTF8") == TDBFilter.TDB_STRING_UTF8
    @test datatype_size(TDBFilter.TDB_DATETIME_NS) == 8
    @test all(datatype_from_name(datatype_name(d)) == d for d in UInt32(0):UInt32(43))
    @test filter_type_name(TDBFilter.TDB_FILTER_DICTIONARY) == "dictionary"
    @test filter_type_from_name("FILTER_GZIP") == TDBFilter.TDB_FILTER_GZIP
    @test status_name(TDBFilter.TDB_ERR_CORRUPT_DATA) == "TDB_ERR_CORRUPT_DATA"
    @test status_name(99) == "TDB_ERR_UNKNOWN"
    e = try datatype_name(44); nothing catch e; e end
    @test e isa TDBFilterError && e.status == TDBFilter.TDB_ERR_INVALID_ARGUMENT
    e = try filter_type_from_name("bitsort"); nothing catch e; e end
    @test e isa TDBFilterError && occursin("bitsort", e.message)

    # Arrays TileDB-Py 0.36.1 wrote (tests/data/c_array, see make_c_array.py).
    arrays = joinpath(@__DIR__, "..", "..", "..", "..", "tests", "data", "c_array")
    a = TDBArray(joinpath(arrays, "dense"); threads = 2)
    dims, attrs = fields(a)
    @test [d.name for d in dims] == ["r", "c"] && attrs[3].nullable
    v = read(a, "a", [(1, 6), (1, 4)])
    @test v isa Vector{Int32} && length(v) == 24 && v[1] == 11 && v[end] == -1
    cols = read(a, ["s", "f"], [(1, 1), (1, 4)])
    @test cols["s"] == ["1111", "", "13", "1414"]   # str(10r+c) repeated (10r+c) % 3 times
    @test ismissing(cols["f"][2]) && cols["f"][1] == 1.1
    close(a)
    close(a) # idempotent
    m = TDBArray(joinpath(arrays, "meta"))
    @test enumeration(m, "colors") == ["red", "green", "blue"]
    @test read(m, "color") == Int8[2, 0, 1, 2]
    @test String(metadata(m)["name"][2]) == "meta array"
    close(m)
    e = try TDBArray("tiledb://namespace/array"); nothing catch e; e end
    @test e isa TDBFilterError && e.status == TDBFilter.TDB_ERR_UNSUPPORTED

    # Writing: create, a dense col-major fragment, a sparse var-size one, metadata; read back.
    dir = mktempdir()
    dense = joinpath(dir, "dense")
    create_array(dense, """{"dimensions": [{"name": "r", "type": "INT32", "domain": [1, 4], "tile": 2},
                                           {"name": "c", "type": "INT32", "domain": [1, 3], "tile": 3}],
                            "attributes": [{"name": "a", "type": "INT64", "filters": "zstd:3"}]}""")
    e = try create_array(dense, "{}"); nothing catch e; e end
    @test e isa TDBFilterError && e.status == TDBFilter.TDB_ERR_INVALID_ARGUMENT
    # The system's refusals are TDB_ERR_IO, naming the path: a parent that is a file.
    plain = joinpath(dir, "plain")
    write(plain, "x")
    e = try create_array(joinpath(plain, "sub", "a"),
                         """{"dimensions": [{"name": "r", "type": "INT32", "domain": [1, 4], "tile": 2}],
                             "attributes": [{"name": "a", "type": "INT64"}]}""")
        nothing
    catch e
        e
    end
    @test e isa TDBFilterError && e.status == TDBFilter.TDB_ERR_IO &&
          occursin("plain/sub: cannot create the folder: Not a directory", e.message)
    @test status_name(TDBFilter.TDB_ERR_IO) == "TDB_ERR_IO"
    w = TDBWriter(dense; timestamp = 5, layout = TDBFilter.TDB_COL_MAJOR)
    set_subarray!(w, [(Int32(1), Int32(4)), (Int32(1), Int32(3))])
    m = reshape(Int64.(1:12), 4, 3)              # m[r, c], column-major in memory
    set_data!(w, "a", m)
    submit!(w)
    name = finalize!(w)
    @test startswith(name, "__5_5_") && endswith(name, "_22")
    close(w)
    close(w) # idempotent
    a = TDBArray(dense)
    @test read(a, "a", [(1, 4), (1, 3)]) == vec(permutedims(m))   # read row-major
    close(a)
    # A failed submit commits nothing; a writer closed without finalize! neither.
    w = TDBWriter(dense)
    set_data!(w, "a", Int64[1, 2, 3])
    e = try submit!(w); nothing catch e; e end
    @test e isa TDBFilterError && e.status == TDBFilter.TDB_ERR_INVALID_ARGUMENT
    close(w)
    w = TDBWriter(dense)
    set_data!(w, "a", zeros(Int64, 12))
    submit!(w)
    close(w)
    @test length(readdir(joinpath(dense, "__commits"))) == 1

    sparse = joinpath(dir, "sparse")
    create_array(sparse, """{"sparse": true,
        "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 99], "tile": 10}],
        "attributes": [{"name": "s", "type": "STRING_UTF8", "cell_val_num": "var", "nullable": true}]}""")
    w = TDBWriter(sparse; timestamp = 3)
    set_data!(w, "x", Int64[42, 7, 99])
    set_strings!(w, "s", ["forty-two", missing, "ninety-nine"])
    submit!(w)
    finalize!(w)
    close(w)
    metadata_put!(sparse, "pair", Int32[5, 6]; timestamp = 10)
    metadata_put!(sparse, "title", "hello"; timestamp = 11)
    metadata_delete!(sparse, "pair"; timestamp = 12)
    a = TDBArray(sparse)
    cols = read(a, ["x", "s"])
    @test cols["x"] == Int64[7, 42, 99]
    @test ismissing(cols["s"][1]) && cols["s"][2:3] == ["forty-two", "ninety-nine"]
    @test collect(keys(metadata(a))) == ["title"] && String(metadata(a)["title"][2]) == "hello"
    lo, hi = tile_mbr(a, 0, 0, 0)
    @test reinterpret(Int64, lo)[1] == 7 && reinterpret(Int64, hi)[1] == 99
    close(a)
    old = TDBArray(sparse; timestamp = 11)
    @test reinterpret(Int32, metadata(old)["pair"][2]) == Int32[5, 6]
    close(old)
end
