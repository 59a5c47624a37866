// msgpackr loads its optional native accelerator inside try/catch and runs without it when loading throws.
throw new Error("msgpackr-extract is not installed in this repository (stubs/msgpackr-extract/README.md)");
