"""The error tree. Workers decide retry vs dead-letter by class, nothing else.

    MemqError
    ├── TransientError          retry with backoff: LLM 429/5xx/timeout, store unavailable,
    │   │                       Neo4j deadlock
    │   ├── StaleVersion        the user's state changed since the plan read it: re-plan
    │   └── UserBusy            the user's claim was not had in time: nothing done, try later
    └── PermanentError          dead-letter with the reason, never retried
        ├── InvalidMessage      the message breaks the contract (schema, version)
        ├── LLMAnswerError      the LLM's answer stayed unparseable after retries
        └── ModelMismatchError  vectors of two embedding models would be compared
"""


class MemqError(Exception):
    """Base of every error memq raises on purpose."""


class TransientError(MemqError):
    """Worth retrying: the same call may succeed later."""


class StaleVersion(TransientError):
    """A write fenced on the user's version found a newer one: another writer committed since
    this plan read the state. The plan is never applied; it is made again from fresh state."""


class UserBusy(TransientError):
    """The user's claim (workers.section) could not be had in time: a drain, check, lifecycle
    job, forget or shard move of the user holds it. Nothing was done; later may succeed."""


class PermanentError(MemqError):
    """Retrying cannot help; the message goes to the dead-letter queue with this reason."""


class InvalidMessage(PermanentError):
    pass


class LLMAnswerError(PermanentError):
    pass


class ModelMismatchError(PermanentError):
    pass
