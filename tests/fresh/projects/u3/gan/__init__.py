"""DCGAN with a non-saturating loss and R1 regularisation."""
