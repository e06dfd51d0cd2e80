"""The code index's settings, as ``paicli/config/settings.py`` fills them (issue 37).

Plain data with no imports, so the settings loader reads it without loading the index.
Vectors only with an endpoint the user configured in their own environment or
``$PAICLI_HOME/config.json`` (never a project's ``.env``: a repository must not send the user's
code, or key, to a server of its choosing).
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_MAX_FILE_BYTES = 1024 * 1024  # bigger files are left out as "huge" (paicli.codeindex.walk)
AUTO_INDEX_MAX_FILES = 20_000  # search_code indexes a project on its first call up to this many files


@dataclass(frozen=True)
class EmbeddingOptions:
    url: str = ""  # PAICLI_EMBEDDING_URL: an OpenAI-compatible base URL (…/v1); "": no vectors
    model: str = ""  # PAICLI_EMBEDDING_MODEL
    api_key: str = field(default="", repr=False)  # PAICLI_EMBEDDING_API_KEY (or the provider's, see settings)
    input_type: bool = False  # PAICLI_EMBEDDING_INPUT_TYPE: send input_type query/passage
    timeout: float = 60.0

    @property
    def enabled(self) -> bool:
        return bool(self.url and self.model)


@dataclass(frozen=True)
class CodeIndexOptions:
    embedding: EmbeddingOptions = EmbeddingOptions()
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES  # PAICLI_CODE_INDEX_MAX_FILE_BYTES: bigger files are skipped
    auto_index_max_files: int = AUTO_INDEX_MAX_FILES  # PAICLI_CODE_INDEX_AUTO_MAX_FILES
