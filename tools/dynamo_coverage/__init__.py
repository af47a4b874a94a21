"""The API coverage table (``docs/api-coverage.md``): every field of every nvidia.com kind (both
versions), of the OperatorConfiguration, and every value of the platform chart and its subcharts, with
where it is validated, where it acts (or where it is refused, or why the seed keeps it stored only) and
which test proves it.

Why a registry in code rather than prose: a table written by hand goes stale the day a field is added. Here
the rows come from the models and the values files (``rows``), the registry (``registry``) says for each
row which function reads it and which test proves it, and ``check`` resolves every reference (the function
exists and names the field and its context; the test exists and names the field; a v1alpha1 field said to
be converted changes the v1beta1 object; a refusal really happens when the validator, the configuration
loader or ``helm template`` is run on a sample). A field with no entry, or an entry whose evidence no
longer holds, fails ``tests/unit/test_api_coverage.py``; the table is regenerated from the same data
(``make coverage-doc``) and compared, like the CRDs. What those static checks read, ``proof`` proves on
the unit tier run under coverage (``make unit``): a named unit test must run the named function, a named
helm test must set the value and render the named template.
"""
