"""Episode stores: the Chroma backend, its codec and tenant-id rules.

>>> from episeg.store import collection_name
>>> collection_name("alice")[:3]
'ep_'
"""

from episeg.store.chroma import ChromaBackend, ChromaEpisodeStore
from episeg.store.codec import EpisodeRecord, decode, encode
from episeg.store.tenants import MAX_TENANT_LENGTH, collection_name, validate_tenant

__all__ = [
    "MAX_TENANT_LENGTH",
    "ChromaBackend",
    "ChromaEpisodeStore",
    "EpisodeRecord",
    "collection_name",
    "decode",
    "encode",
    "validate_tenant",
]
