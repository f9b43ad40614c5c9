"""Independent references the tests check the package against (plain numpy, nothing from
the package), and the tests of the references themselves."""
