"""The HTTP plumbing every source and forge client shares: a bounded, retrying client
(``client``), hostile-answer reading (``bounded``) and page walking (``paging``)."""
