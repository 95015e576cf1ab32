import SoCLI

await SoMain.run()
