"""The local object stores of the tests (moto for S3, azurite for Azure Blob): their URIs,
TileDB-Py's configuration, ours (TileDB's key names through tdbfilter.Array(config=...) and
`tdbf --config`), the environment-only configuration, and bucket creation.

The servers are started by scripts/object-store-servers.sh, which exports TDBF_S3_ENDPOINT
(http://127.0.0.1:PORT) and TDBF_AZURE_ENDPOINT (http://127.0.0.1:PORT/devstoreaccount1).
"""

from __future__ import annotations

import os
import uuid
from urllib.parse import urlparse

AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
               "KBHBeksoGMGw==")


def require(var: str) -> str:
    v = os.environ.get(var)
    if not v:
        raise SystemExit(f"{var} is not set: start the servers with scripts/object-store-servers.sh "
                         "(scripts/test.d/55-object-store.sh does)")
    return v


class Store:
    """One bucket or container on one server."""

    def __init__(self, kind: str, endpoint: str, bucket: str | None = None):
        self.kind = kind
        self.endpoint = endpoint.rstrip("/")
        self.bucket = bucket or f"tdbf-{uuid.uuid4().hex[:12]}"
        u = urlparse(self.endpoint)
        self.hostport = u.netloc
        if kind == "s3":
            self.base = f"s3://{self.bucket}"
            self.tiledb_config = {
                "vfs.s3.endpoint_override": self.hostport,
                "vfs.s3.scheme": u.scheme,
                "vfs.s3.use_virtual_addressing": "false",
                "vfs.s3.region": "us-east-1",
                "vfs.s3.aws_access_key_id": "testing",
                "vfs.s3.aws_secret_access_key": "testing",
            }
            self.env = {
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": self.endpoint,
                "AWS_ALLOW_HTTP": "true",
            }
        else:
            self.base = f"azure://{self.bucket}"
            self.tiledb_config = {
                "vfs.azure.storage_account_name": AZURITE_ACCOUNT,
                "vfs.azure.storage_account_key": AZURITE_KEY,
                "vfs.azure.blob_endpoint": self.endpoint,
            }
            self.env = {
                "AZURE_STORAGE_ACCOUNT_NAME": AZURITE_ACCOUNT,
                "AZURE_STORAGE_ACCOUNT_KEY": AZURITE_KEY,
                "AZURE_STORAGE_ENDPOINT": self.endpoint,
            }
        # Ours takes TileDB's key names.
        self.our_config = dict(self.tiledb_config)

    def uri(self, name: str) -> str:
        return f"{self.base}/{name}"

    def config_args(self) -> list[str]:
        """`tdbf ... --config k=v` arguments."""
        out = []
        for k, v in self.our_config.items():
            out += ["--config", f"{k}={v}"]
        return out

    def ctx(self, key: str | None = None):
        import tiledb
        cfg = dict(self.tiledb_config)
        if key is not None:
            cfg.update({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key})
        return tiledb.Ctx(tiledb.Config(cfg))

    def create_bucket(self) -> None:
        if self.kind == "s3":
            self.boto3().create_bucket(Bucket=self.bucket)
        else:
            import tiledb
            tiledb.VFS(ctx=self.ctx()).create_bucket(self.base)

    def boto3(self):
        import boto3
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="testing",
                            aws_secret_access_key="testing", region_name="us-east-1")

    def keys(self, prefix: str) -> list[str]:
        """Every object key under `prefix` (S3 through boto3, Azure through TileDB's VFS)."""
        if self.kind == "s3":
            out = []
            for page in self.boto3().get_paginator("list_objects_v2").paginate(
                    Bucket=self.bucket, Prefix=prefix):
                out += [o["Key"] for o in page.get("Contents", [])]
            return sorted(out)
        import tiledb
        vfs = tiledb.VFS(ctx=self.ctx())
        out = []

        def walk(uri):
            for u in vfs.ls(uri):
                if vfs.is_dir(u):
                    walk(u)
                else:
                    out.append(u[len(self.base) + 1:])
        walk(self.uri(prefix))
        return sorted(out)


def stores(bucket: str | None = None) -> list[Store]:
    return [Store("s3", require("TDBF_S3_ENDPOINT"), bucket),
            Store("azure", require("TDBF_AZURE_ENDPOINT"), bucket)]
