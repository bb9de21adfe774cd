from validator.cli.main import run

run()
