"""Pickling of open arrays as TileDB-Py pickles them: by URI, mode, key, viewed attribute,
timestamp range and the context's config (not the cells); unpickling opens the array
again."""

from __future__ import annotations


def array_state(array) -> tuple:
    """What pickling keeps of an open array."""
    return (array.uri, array.mode, array.key, array.view_attr, array.timestamp_range,
            array.ctx.config().dict())


def restore_array(array, state: tuple) -> None:
    """Opens ``array`` (a fresh instance) again from :func:`array_state`'s tuple."""
    from .ctx import Config, Ctx, default_ctx

    uri, mode, key, view_attr, timestamp_range, config = state
    ctx = Ctx(Config(config)) if config else default_ctx()
    array.__init__(uri, mode=mode, key=key, attr=view_attr, timestamp=timestamp_range,
                   ctx=ctx)
