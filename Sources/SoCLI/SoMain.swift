import ArgumentParser
import Foundation
import SoBasics

public enum SoMain {
    public static func run() async {
        Interrupts.shared.install()
        let code = await SoCommandLine.execute(Array(CommandLine.arguments.dropFirst()), context: .live())
        exit(code)
    }
}
