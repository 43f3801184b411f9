"""A fabric's validation report on the web (issue 38): built from what its engine publishes and what its
collectors read (:mod:`.inputs`, :mod:`.build`), kept per fabric and recomputed at most every
``IBWEB_VALIDATION_INTERVAL_S`` (:mod:`.store`, :mod:`.tasks`), shown to each view with the hosts it may not name
relabelled and the P_Keys of partitions it may not see hidden (:mod:`.shown`), the isolation advice joined with the
jobs on each advised cable and its cable what-if (:mod:`.isolation`), a cluster's planes side by side
(:mod:`.cluster`) and a switch's vitals for the map's panel (:mod:`.device`)."""
