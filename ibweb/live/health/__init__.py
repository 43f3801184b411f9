"""Link health of a fabric as ibweb keeps it: the report its engine grades (:mod:`.report`), stored per fabric
(:mod:`ibweb.runtime.health`) and shown to each access view (:mod:`.shown`)."""
