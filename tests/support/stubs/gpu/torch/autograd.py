from . import _stub


def grad(outputs, inputs, grad_outputs=None, retain_graph=None):
    from . import Tensor

    _stub.counters["autograd_grad_calls"] += 1
    out = outputs[0]
    if not retain_graph:
        raise RuntimeError("stub: retain_graph must be set for repeated grads")
    _stub.launch(2 * out.numel() * _stub.COST_PER_ELEMENT_MS, numel=out.numel(), kind="autograd")
    return tuple(Tensor(x.shape, x.dtype) for x in inputs)
