from ..compiler.compiler import CompiledKernel, Metadata


class JITFunction:
    """Compiles once (per instance), launches through the CompiledKernel it returns."""

    def __init__(self, fn, name, num_ctas=1, cluster_dims=(1, 1, 1)):
        self.fn = fn
        self.metadata = Metadata(name=name, num_ctas=num_ctas, cluster_dims=cluster_dims, num_warps=4)
        self.kernel = None

    def _do_compile(self):
        return CompiledKernel(self.fn, self.metadata)

    def run(self, *args, grid, warmup=False, **kwargs):
        if self.kernel is None:
            self.kernel = self._do_compile()
        if not warmup:
            self.kernel.launch(args)
        return self.kernel

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)
