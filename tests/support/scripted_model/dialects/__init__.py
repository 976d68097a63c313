"""One module per model API; each defines ``DIALECT``, an object with
``matches(method, path) -> bool`` and ``answer(request, script) -> Answer``
(see ``tests.support.scripted_model.server``). The server finds them all here."""
