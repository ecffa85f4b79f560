"""Marks of ``../shared/projects`` known not to hold yet: (project, file, variant, line, code) -> why.

A ratchet read by tests/test_projects.py: when a change makes a mark hold, that test fails until
its row is removed here. False positives are never listed: they are fixed.
"""

PENDING: dict[tuple[str, str, str, int, str], str] = {
    ('p01_kaggle_melanoma', 'model.py', 'default', 38, 'XLA502'): 'forward of a model moved by another module: call-site tensors into forward',
    ('p01_kaggle_melanoma', 'utils.py', 'default', 19, 'XLA206'): 'reach: device model with Dropout in another module',
    ('p01_kaggle_melanoma', 'utils.py', 'default', 36, 'XLA501'): 'call-site device tensor into a method parameter across modules',
    ('p01_kaggle_melanoma', 'utils.py', 'default', 50, 'XLA801'): 'call-site module value (xm) into a parameter across modules',
    ('p01_kaggle_melanoma', 'utils.py', 'default', 59, 'XLA204'): 'call-site device loader into a parameter across modules',
    ('p01_kaggle_melanoma', 'utils.py', 'default', 64, 'XLA507'): 'device tensor from a parameter (model/device passed in)',
    ('p02_hf_style_trainer', 'trainer/callbacks.py', 'default', 33, 'XLA501'): 'callbacks in a list: method calls through list elements',
    ('p02_hf_style_trainer', 'trainer/callbacks.py', 'default', 50, 'XLA604'): 'imported helper returns a local-master test',
    ('p02_hf_style_trainer', 'trainer/callbacks.py', 'default', 62, 'XLA507'): 'callbacks in a list: method calls through list elements',
    ('p02_hf_style_trainer', 'trainer/callbacks.py', 'default', 99, 'XLA602'): 'guarded call of a method of another module that saves',
    ('p02_hf_style_trainer', 'trainer/data.py', 'default', 54, 'XLA304'): 'loader returned by a helper and iterated in another module',
    ('p03_dual_backend_lib', 'fastfit/backends/__init__.py', 'default', 61, 'XLA601'): 'inherited method of a launched subclass in another module',
    ('p03_dual_backend_lib', 'fastfit/loop.py', 'default', 53, 'XLA405'): 'inherited prepare_model moves to XLA for the TPU backend',
    ('p03_dual_backend_lib', 'fastfit/loop.py', 'default', 75, 'XLA203'): 'backend.optimizer_step is xm.optimizer_step for the TPU backend',
    ('p03_dual_backend_lib', 'fastfit/loop.py', 'default', 78, 'XLA501'): 'launch through a method of a backend object (torch_xla.launch in tpu.py)',
    ('p04_spmd_llama', 'data.py', 'default', 34, 'XLA902'): 'SPMD program of another module calls the helper',
    ('p04_spmd_llama', 'model.py', 'default', 106, 'XLA503'): 'forward called from the SPMD step of another module',
    ('p04_spmd_llama', 'sharding.py', 'default', 24, 'XLA905'): 'CPU model passed from another module before its move',
    ('p04_spmd_llama', 'sharding.py', 'default', 26, 'XLA905'): 'CPU model passed from another module before its move',
    ('p04_spmd_llama', 'sharding.py', 'default', 27, 'XLA905'): 'CPU model passed from another module before its move',
    ('p04_spmd_llama', 'sharding.py', 'default', 28, 'XLA905'): 'CPU model passed from another module before its move',
    ('p04_spmd_llama', 'sharding.py', 'default', 29, 'XLA905'): 'CPU model passed from another module before its move',
    ('p04_spmd_llama', 'sharding.py', 'default', 30, 'XLA905'): 'CPU model passed from another module before its move',
}
