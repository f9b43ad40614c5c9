from hsw2v.cli import main

main()
