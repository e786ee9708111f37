"""TileDB-Py's pandas layer (``tiledb.dataframe_``): ``from_pandas``, ``from_csv``,
``open_dataframe`` and the column typing (:class:`ColumnInfo`) they share.

A dataframe becomes an array whose dimensions are its index levels (or the columns named by
``index_dims``; an unnamed row index is the dimension ``__tiledb_rows``) and whose attributes
are the other columns. As TileDB-Py, the pandas types that do not map to a TileDB type one to
one are kept in the array's metadata (``__pandas_attribute_repr``, ``__pandas_index_dims``,
JSON name -> dtype) and applied again by ``A.df[...]`` (:func:`update_df_from_meta`).
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from typing import Any, List, Optional

import numpy as np

from ..errors import TdbfilterError as TileDBError

ROWS = "__tiledb_rows"
ATTR_META = "__pandas_attribute_repr"
INDEX_META = "__pandas_index_dims"

# The keyword arguments from_pandas/from_csv take for themselves (the rest go to pandas).
DEFAULTS = {
    "ctx": None, "sparse": None, "index_dims": None, "allows_duplicates": True,
    "mode": "ingest", "attr_filters": True, "dim_filters": True, "coords_filters": True,
    "offsets_filters": True, "full_domain": False, "tile": None, "row_start_idx": None,
    "fillna": None, "column_types": None, "varlen_types": None, "capacity": None,
    "date_spec": None, "cell_order": "row-major", "tile_order": "row-major",
    "timestamp": None, "debug": None, "fit_to_df": False,
}


def _split_kwargs(kwargs: dict) -> dict:
    """Takes the keyword arguments of :data:`DEFAULTS` out of ``kwargs``; returns them (with
    the defaults of those not given)."""
    out = dict(DEFAULTS)
    for k in DEFAULTS:
        if k in kwargs:
            out[k] = kwargs.pop(k)
    return out


def _pd():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - pandas is a requirement of this layer
        raise TileDBError("tiledb's dataframe functions need pandas") from e
    return pandas


_INFERRED = {
    "bytes": np.bytes_, "string": "<U0", "floating": np.float64, "integer": np.int64,
    "decimal": np.float64, "complex": np.complex128, "boolean": np.bool_,
    "datetime64": np.datetime64, "datetime": np.datetime64, "date": np.datetime64,
    "timedelta64": np.timedelta64, "timedelta": np.timedelta64, "time": np.timedelta64,
}


def _infer_values_dtype(values, column: str):
    """The numpy type of the values of a categorical's categories."""
    from pandas.api import types as pdt

    kind = pdt.infer_dtype(values)
    if kind not in _INFERRED:
        what = "categorical of categorical" if kind == "categorical" else kind
        raise NotImplementedError(f"Pandas type '{what}' is not supported (column {column})")
    return _INFERRED[kind]


@dataclass(frozen=True)
class EnumerationInfo:
    """The enumeration a categorical column becomes: its values' type, order and values."""

    dtype: Any
    ordered: bool = False
    values: Optional[List[Any]] = None


@dataclass(frozen=True)
class ColumnInfo:
    """How a dataframe column is stored: its TileDB dtype, the pandas dtype to restore
    (``repr``), whether it is nullable, var-sized, or an enumeration (categorical)."""

    dtype: Any
    repr: Optional[str] = None
    nullable: bool = False
    var: bool = False
    enumeration: bool = False
    enumeration_info: Optional[EnumerationInfo] = None

    @classmethod
    def from_values(cls, array_like, varlen_types=()):
        """The column info of a pandas Series (object columns typed by their values)."""
        from pandas import CategoricalDtype
        from pandas.api import types as pdt

        name = getattr(array_like, "name", None)
        if pdt.is_object_dtype(array_like):
            kind = pdt.infer_dtype(array_like)
            if kind == "bytes":
                return cls.from_dtype(np.bytes_, name)
            if kind == "string":
                return cls.from_dtype(np.str_, name)
            raise NotImplementedError(f"{kind} inferred dtype not supported (column {name})")
        if isinstance(getattr(array_like, "dtype", None), CategoricalDtype):
            return cls.from_categorical(array_like.cat, array_like.dtype, name)
        if not hasattr(array_like, "dtype"):
            array_like = np.asanyarray(array_like)
        return cls.from_dtype(array_like.dtype, name, varlen_types)

    @classmethod
    def from_categorical(cls, cat, dtype, column_name):
        """A categorical column: int32 codes into an enumeration of its categories."""
        values = cat.categories.values
        return cls(np.dtype(np.int32), repr=dtype.name, enumeration=True,
                   enumeration_info=EnumerationInfo(
                       dtype=_infer_values_dtype(values, column_name), ordered=cat.ordered,
                       values=values))

    @classmethod
    def from_dtype(cls, dtype, column_name, varlen_types=()):
        """The column info of a dtype (numpy, pandas extension, or "ascii"/"blob")."""
        from pandas.api import types as pdt

        if isinstance(dtype, str) and dtype == "ascii":
            return cls("ascii", var=True)
        if isinstance(dtype, str) and dtype == "blob":
            return cls(np.dtype(np.bytes_), var=True)
        dtype = pdt.pandas_dtype(dtype)
        if pdt.is_extension_array_dtype(dtype):
            np_type = np.dtype(getattr(dtype, "subtype", dtype.type))
            var = bool(varlen_types and dtype in varlen_types)
            # a var-sized column is not nullable (as TileDB-Py); else as pandas can hold NA
            nullable = False if var else bool(dtype.construct_array_type()._can_hold_na)
            return cls(np_type, repr=dtype.name, nullable=nullable, var=var)
        if pdt.is_bool_dtype(dtype):
            return cls(np.dtype(bool), repr="bool")
        if pdt.is_complex_dtype(dtype):
            raise NotImplementedError(f"complex dtype not supported (column {column_name})")
        if pdt.is_numeric_dtype(dtype):
            if dtype == np.float16 or (hasattr(np, "float128") and dtype == np.float128):
                raise NotImplementedError("Only single and double precision float dtypes are "
                                          f"supported (column {column_name})")
            return cls(dtype)
        if pdt.is_datetime64_any_dtype(dtype):
            if dtype == "datetime64[ns]":
                return cls(dtype)
            raise NotImplementedError("Only 'datetime64[ns]' datetime dtype is supported "
                                      f"(column {column_name})")
        if dtype.type in (np.bytes_, np.str_):
            return cls(dtype, var=True)
        raise NotImplementedError(f"{dtype} dtype not supported (column {column_name})")


def _column_infos(df, column_types, varlen_types) -> dict:
    out = {}
    for name, col in df.items():
        if column_types and name in column_types:
            out[name] = ColumnInfo.from_dtype(column_types[name], name, varlen_types)
        else:
            out[name] = ColumnInfo.from_values(col, varlen_types)
    return out


def _filters(spec):
    """A filter list from from_pandas' ``*_filters`` argument (True: zstd, None: none)."""
    from ._schema import Filter, FilterList, ZstdFilter

    if spec is True:
        return FilterList([ZstdFilter()])
    if spec is None:
        return FilterList()
    if isinstance(spec, (list, FilterList)):
        return FilterList(spec)
    if isinstance(spec, Filter):
        return FilterList([spec])
    raise ValueError("Unknown FilterList type!")


def _field_filters(name, spec):
    return _filters(spec.get(name, True)) if isinstance(spec, dict) else _filters(spec)


def _make_dim(name, dtype, values, full_domain, tile, filters):
    from ._schema import Dim
    from ._types import DataType

    dtype = dtype if isinstance(dtype, str) else np.dtype(dtype)
    text = isinstance(dtype, str) or dtype.kind in "SU"
    if text:
        lo = hi = None
    elif not full_domain:
        arr = np.asarray(values)
        lo, hi = arr.min(), arr.max()
    else:
        lo, hi = DataType.from_numpy(dtype).domain
        if dtype.kind in "iuM":
            # TileDB needs the domain's width plus one tile to fit in a uint64
            ilo = int(lo.astype(np.int64)) if dtype.kind == "M" else int(lo)
            ihi = int(hi.astype(np.int64)) if dtype.kind == "M" else int(hi)
            if ihi - ilo > 2 ** 64 - 1 - tile:
                ihi -= tile
                hi = np.datetime64(ihi, np.datetime_data(dtype)[0]) if dtype.kind == "M" \
                    else dtype.type(ihi)
    if not text and dtype.kind in "iuM":
        ilo = int(np.asarray(lo).astype(np.int64)) if dtype.kind == "M" else int(lo)
        ihi = int(np.asarray(hi).astype(np.int64)) if dtype.kind == "M" else int(hi)
        tile = max(1, min(int(tile), 1 + ihi - ilo))
    elif not text and dtype.kind == "f":
        with np.errstate(over="ignore"):
            width = hi - lo
        if width < tile:
            tile = np.ceil(width)
    return Dim(name=name, domain=(lo, hi), dtype=np.bytes_ if text else dtype, tile=tile,
               filters=filters)


def _dims(df, index_dims, infos, tile, full_domain, filters):
    """The dimensions of the array of ``df`` and their pandas dtypes (for the metadata)."""
    pd = _pd()
    per_dim = isinstance(tile, dict)
    if tile is not None:
        if not all(isinstance(v, (int, float)) for v in (tile.values() if per_dim else (tile,))):
            raise ValueError("Invalid tile kwarg: expected int or dict of column names mapped "
                             f"to ints. Got '{tile!r}'")
    index = df.index
    specs, meta = [], {}
    for name in index_dims or index.names:
        if name in index.names:
            values = index.get_level_values(name)
        elif name in df.columns:
            values = df[name]
        else:
            raise ValueError(f"Unknown column or index named {name!r}")
        dtype = infos[name].dtype if name in infos else ColumnInfo.from_values(values).dtype
        stored = dtype
        if name == ROWS and isinstance(index, pd.RangeIndex):
            stored = np.dtype("uint64")
        if name is None:
            name = ROWS
        meta[name] = dtype
        specs.append((name, stored, values))
    default_tile = {1: 10000, 2: 1000, 3: 100}.get(len(specs), 10)
    dims = []
    for name, dtype, values in specs:
        t = tile.get(name) if per_dim else tile
        dims.append(_make_dim(name, dtype, values, full_domain,
                              default_tile if t is None else t,
                              _field_filters(name, filters)))
    return dims, meta


def _sparse_for(dtypes, sparse):
    """Sparse when asked, or (unless asked dense) when a dimension is text or the
    dimensions' types differ."""
    dtypes = list(dtypes)
    if any(isinstance(d, str) or np.dtype(d).kind in "SU" for d in dtypes):
        if sparse is False:
            raise TileDBError("Cannot create dense array with string-typed dimensions")
        if sparse is None:
            return True
    if not all(dtypes[0] == d for d in dtypes):
        if sparse is False:
            raise TileDBError("Cannot create dense array with heterogeneous dimension data "
                              "types")
        if sparse is None:
            return True
    return bool(sparse)


def _create(uri, df, sparse, full_domain, index_dims, infos, args):
    from ._array import Array
    from ._schema import ArraySchema, Attr, Domain, Enumeration
    from . import open as tdb_open

    dims, dim_meta = _dims(df, index_dims, infos, args.get("tile"), full_domain,
                           args.get("dim_filters", True))
    sparse = _sparse_for(dim_meta.values(), sparse)
    names = [c for c in df.columns if c not in index_dims]
    attrs, reprs, enums = [], {}, []
    for name in names:
        info = infos[name]
        filters = _field_filters(name, args.get("attr_filters", True))
        if info.enumeration:
            attrs.append(Attr(name=name, filters=filters, dtype=np.int32, enum_label=name,
                              nullable=info.nullable, var=info.var))
            e = info.enumeration_info
            enums.append(Enumeration(name=name, ordered=e.ordered,
                                     values=np.array(e.values, dtype=e.dtype)))
        else:
            attrs.append(Attr(name=name, filters=filters, dtype=info.dtype,
                              nullable=info.nullable, var=info.var))
        if info.repr is not None:
            reprs[name] = info.repr
    coords = args.get("coords_filters", True)
    schema = ArraySchema(
        sparse=sparse, domain=Domain(*dims), attrs=attrs, enums=enums,
        cell_order=args["cell_order"], tile_order=args["tile_order"],
        coords_filters=None if coords is True else _filters(coords),
        offsets_filters=_filters(args.get("offsets_filters", True)),
        capacity=args.get("capacity") or 0,
        allows_duplicates=sparse and args.get("allows_duplicates", False))
    Array.create(uri, schema)
    with tdb_open(uri, "w") as A:
        if reprs:
            A.meta[ATTR_META] = json.dumps({n: str(t) for n, t in reprs.items()})
        if dim_meta:
            A.meta[INDEX_META] = json.dumps({n: str(t) for n, t in dim_meta.items()})


def _to_numpy(df, infos, fillna):
    """Per column, the values to write and (nullable columns) the validity bytes."""
    values, valid = {}, {}
    for name, col in df.items():
        info = infos[name]
        if fillna is not None and name in fillna:
            col = col.fillna(fillna[name])
        kw = {}
        if not info.var:
            kw["dtype"] = info.dtype
        if info.nullable:
            kw["na_value"] = np.dtype(info.dtype).type()
            valid[name] = (~col.isna()).to_numpy(dtype=np.uint8)
        if info.enumeration:
            values[name] = col.cat.codes.to_numpy(**kw)
        else:
            values[name] = col.to_numpy(**kw)
    return values, valid


def _write(uri, df, values, valid, created, index_dims, row_start_idx, fit_to_df, timestamp):
    from . import open as tdb_open

    with tdb_open(uri, "w", timestamp=timestamp) as A:
        sch = A.schema
        for j in range(sch.nattr):
            attr = sch.attr(j)
            if attr.enum_label is not None and attr.name in values:
                cats = A.enum(attr.enum_label).values()
                values[attr.name] = df[attr.name].cat.set_categories(cats).cat.codes.to_numpy()
            elif (attr.dtype.kind in "SU" and attr.name in values
                    and np.asarray(values[attr.name]).dtype.kind in "Mm"):
                # TileDB-Py: datetimes appended to a text attribute are written as pandas
                # prints them
                values[attr.name] = df[attr.name].astype(str).to_numpy(dtype=object)
        if sch.sparse:
            coords = []
            for k in range(sch.ndim):
                name = sch.domain.dim(k).name
                if ((not created or name in index_dims) and name not in df.index.names
                        and name != ROWS):
                    c = values.pop(name)
                else:
                    c = df.index.get_level_values(k)
                if row_start_idx is not None and name == ROWS:
                    c = c + row_start_idx
                c = np.asarray(c)
                ddt = sch.domain.dim(k).dtype
                if c.dtype == object and ddt.kind in "iufM":
                    c = c.astype(ddt)  # e.g. dates of a CSV read as text: numpy parses them
                coords.append(c)
            _put(A, tuple(coords), values, valid)
            return
        # as TileDB-Py's dense writes: the attributes' values, other columns ignored
        values = {k: v for k, v in values.items() if sch.has_attr(k)}
        valid = {k: v for k, v in valid.items() if k in values}
        if fit_to_df:
            # the box from each dimension column's least to greatest value
            box = []
            for d in sch.domain:
                lo, hi = df[d.name].min(), df[d.name].max()
                if d.dtype.kind == "M":
                    unit = np.datetime_data(d.dtype)[0]
                    box.append(slice(np.datetime64(lo, unit),
                                     np.datetime64(hi, unit) + np.timedelta64(1, unit)))
                else:
                    box.append(slice(int(lo), int(hi) + 1))
            _put(A, tuple(box), values, valid)
        else:
            start = row_start_idx or 0
            _put(A, slice(start, start + len(df)), values, valid)


def _put(A, selection, values, valid) -> None:
    """``A[selection] = values`` with validity bytes (TileDB-Py's ``_setitem_impl``)."""
    from ._write import write

    write(A, A._open(), selection, values, valid)


def from_pandas(uri, dataframe, **kwargs):
    """Creates (``mode="ingest"``/``"schema_only"``) or appends to (``"append"``) the array
    at ``uri`` from a pandas DataFrame (TileDB-Py's ``tiledb.from_pandas``)."""
    from .ctx import Ctx, scope_ctx

    if "tiledb_args" in kwargs:
        args = kwargs.pop("tiledb_args")
    else:
        args = _split_kwargs(kwargs)
    ctx = args.get("ctx")
    if ctx is not None and not isinstance(ctx, Ctx):
        raise ValueError(f"`ctx` expected a TileDB Context object but saw {type(ctx)}")
    with scope_ctx(ctx):
        _from_pandas(uri, dataframe, args)


def _from_pandas(uri, df, args):
    from . import array_exists
    from ._schema import ArraySchema

    pd = _pd()
    mode = args.get("mode", "ingest")
    if mode != "append" and array_exists(uri):
        raise TileDBError(f"Array URI '{uri}' already exists!")
    sparse = args["sparse"]
    index_dims = args.get("index_dims") or ()
    row_start_idx = args.get("row_start_idx")
    fit_to_df = args.get("fit_to_df")
    write, create = True, True
    if mode is not None:
        if mode == "schema_only":
            write = False
        elif mode == "append":
            create = False
            if (not ArraySchema.load(uri).sparse and row_start_idx is None
                    and not fit_to_df):
                raise TileDBError("Cannot append to dense array without either "
                                  "'row_start_idx' or 'fit_to_df'")
        elif mode != "ingest":
            raise TileDBError(f"Invalid mode specified ('{mode}')")
    full_domain = args.get("full_domain", False)
    if sparse is False and (not index_dims or "index_col" not in args):
        full_domain = True
    if full_domain is None and args.get("nrows"):
        full_domain = False
    date_spec = args.get("date_spec")
    if date_spec:
        df = df.assign(**{n: pd.to_datetime(df[n], format=f) for n, f in date_spec.items()})
    df.columns = df.columns.map(str)
    infos = _column_infos(df, args.get("column_types"), args.get("varlen_types"))
    if create:
        _create(uri, df, sparse, full_domain, index_dims, infos, args)
    if write and len(df) == 0:
        write = False  # nothing to write: TileDB-Py's empty write leaves the array as it is
    if write:
        if args.get("debug", True):
            print(f"`tiledb.from_pandas` writing '{len(df)}' rows")
        values, valid = _to_numpy(df, infos, args.get("fillna"))
        _write(uri, df, values, valid, create, index_dims, row_start_idx, fit_to_df,
               args.get("timestamp"))


def open_dataframe(uri, *, attrs=None, use_arrow=None, idx=slice(None), ctx=None):
    """The array at ``uri`` as a pandas DataFrame (``A.query(coords=True).df[idx]``)."""
    from . import open as tdb_open

    with tdb_open(uri, ctx=ctx) as A:
        df = A.query(attrs=attrs, use_arrow=use_arrow, coords=True).df[idx]
    if attrs and list(df.columns) != list(attrs):
        df = df[attrs]
    return df


def _csv_batches(files, pandas_args):
    """Dataframes read from ``files`` in turn, grouped in batches of ``chunksize`` rows."""
    pd = _pd()
    chunk = pandas_args["chunksize"]
    batch, rows = [], 0
    for f in files:
        reader = pd.read_csv(f, **pandas_args)
        reader.chunksize = chunk - rows
        for part in reader:
            batch.append(part)
            rows += len(part)
            if rows == chunk:
                yield batch
                batch, rows = [], 0
            reader.chunksize = chunk - rows
    if batch:
        yield batch


def _rows_index(df, args):
    if "index_col" not in args and df.index.name is None:
        df.index.name = ROWS


def from_csv(uri: str, csv_file, **kwargs):
    """Creates or appends to the array at ``uri`` from CSV file(s) read by
    ``pandas.read_csv`` (TileDB-Py's ``tiledb.from_csv``; the keywords of
    :func:`from_pandas` are taken, the others go to pandas)."""
    from . import array_exists
    from .ctx import Ctx, scope_ctx
    from .vfs import VFS, FileIO

    pd = _pd()
    args = kwargs.get("tiledb_args") or _split_kwargs(kwargs)
    pandas_args = copy.deepcopy(kwargs)
    ctx = args.get("ctx")
    if ctx is not None and not isinstance(ctx, Ctx):
        raise ValueError(f"`ctx` expected a TileDB Context object but saw {type(ctx)}")
    multi = False
    if isinstance(csv_file, str) and not os.path.isfile(csv_file):
        csv_file = FileIO(VFS(ctx=ctx), csv_file, mode="rb")
    elif isinstance(csv_file, (list, tuple)):
        multi = True
    mode = args.get("mode", None)
    if mode is not None:
        if mode == "schema_only" and "nrows" not in kwargs:
            pandas_args["nrows"] = 500
        elif mode not in ("ingest", "append", "schema_only"):
            raise TileDBError(f"Invalid mode specified ('{mode}')")
    with scope_ctx(ctx):
        if mode != "append" and array_exists(uri):
            raise TileDBError(f"Array URI '{uri}' already exists!")
    chunksize = kwargs.get("chunksize", None)
    if multi and not (chunksize or mode == "schema_only"):
        raise TileDBError("Multiple input CSV files requires a 'chunksize' argument")
    if (multi or chunksize is not None) and "nrows" not in kwargs:
        args["full_domain"] = True
    if multi or chunksize is not None:
        if multi:
            args["full_domain"] = True
            batches = (pd.concat(b) for b in _csv_batches(csv_file, pandas_args))
        else:
            batches = iter(pd.read_csv(csv_file, **pandas_args))
        written = 0
        for df in batches:
            if "index_col" not in args and df.index.name is None:
                df.reset_index(drop=True, inplace=True)
                df.index.name = ROWS
            args["row_start_idx"] = written
            from_pandas(uri, df, tiledb_args=args)
            args["mode"] = "append"
            written += len(df)
            if multi and mode == "schema_only":
                break
    else:
        df = pd.read_csv(csv_file, **kwargs)
        _rows_index(df, args)
        kwargs.update(args)
        from_pandas(uri, df, **kwargs)


def update_df_from_meta(df, meta, index_col=True):
    """Applies the pandas dtypes and index kept in an array's metadata by
    :func:`from_pandas` to a dataframe read from it (``index_col``: True for the stored
    index, a name or names for another, falsy for none)."""
    dtypes = {}
    if ATTR_META in meta:
        for name, t in json.loads(meta[ATTR_META]).items():
            if name in df:
                dtypes[name] = t
    index_cols = []
    if INDEX_META in meta:
        stored = json.loads(meta[INDEX_META])
        index_cols = [c for c in stored if c in df]
        for name, t in stored.items():
            if name in df:
                dtypes[name] = t
    if dtypes:
        df = df.astype(dtypes, copy=False)
    if index_col:
        if index_col is not True:
            df.set_index(index_col, inplace=True)
        elif index_cols:
            df.set_index(index_cols, inplace=True)
            if ROWS in index_cols:
                index_cols[index_cols.index(ROWS)] = None
                if len(index_cols) == 1:
                    df.index.rename(index_cols[0], inplace=True)
                else:
                    df.index.rename(index_cols, inplace=True)
    return df


def from_parquet(uri, parquet_uri, **kwargs):
    """Creates the array at ``uri`` from a parquet file read by ``pandas.read_parquet``."""
    pd = _pd()
    args = _split_kwargs(kwargs)
    df = pd.read_parquet(parquet_uri, **kwargs)
    from_pandas(uri, df, tiledb_args=args)

