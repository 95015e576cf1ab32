import ArgumentParser
import Foundation
import SoActions
import SoBasics
import SoDeploy
import SoWorkspace

/// The task id argument of the `tasks` verbs.
struct TaskID: ParsableArguments {
    @Argument(
        help: ArgumentHelp("The task's id (as 'task --detach' printed it, or 'tasks' lists it).", valueName: "id"))
    var id: Int

    func validate() throws {
        if id < 1 { throw ValidationError("a task id is a number from 1: '\(id)' is none") }
    }
}
