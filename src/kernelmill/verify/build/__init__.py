"""Building candidates' extensions: the fast `load_inline` builder (`inline_build`), its
cache (`buildcache`), torch's headers prepared once (`build_prepare`), the unit tools
(`cuda_split`, `slim_units`, `unit_merge`, `link_stubs`) and builds found by running the
candidate's import (`lazy_builds`)."""
